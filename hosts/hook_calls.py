"""What a Claude Code hook POST says, read once: which event, which session, and its fields, bounded.

Only the fields every event carries are checked; anything else (a new event, a new field) is
kept as sent, so a newer host never gets an error from us for speaking a newer dialect.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

# The host's own id for sessions that are not UUIDs (other hosts) maps to one stable guid.
NAMESPACE = uuid.UUID("6f1c1f8e-2b0f-4a4e-9a43-5d0c7a8e4b11")

# How much of a large field (a prompt, a tool's output) is kept; the full size is noted beside it.
TEXT_LIMIT = 4000
SUMMARY_LIMIT = 120


class BadHookBody(ValueError):
    """A body that is not a hook call; `field` names what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


@dataclass(frozen=True)
class HookCall:
    event: str
    session_id: str
    body: dict[str, Any]
    # The agent host that sent it (hosts.registry), by the URL it was POSTed to.
    host: str = "claude-code"

    @property
    def guid(self) -> uuid.UUID:
        try:
            return uuid.UUID(self.session_id)
        except ValueError:
            return uuid.uuid5(NAMESPACE, self.session_id)

    @property
    def cwd(self) -> str:
        return _text(self.body.get("cwd"))

    @property
    def tool_name(self) -> str:
        return _text(self.body.get("tool_name"))

    @property
    def tool_input(self) -> Any:
        return self.body.get("tool_input")

    def summary(self) -> str:
        """The tool use in a few words: "Bash: npm test", "Edit: src/app.py"."""
        return summarise(self.tool_name, self.tool_input)


REQUIRED = ("hook_event_name", "session_id")
TEXT_FIELDS = ("cwd", "transcript_path", "prompt_id", "tool_name", "tool_use_id", "prompt", "reason", "permission_mode")


def parse(body: Any, host: str = "claude-code") -> HookCall:
    """The hook call a parsed JSON body holds; BadHookBody names the field that is wrong."""
    if not isinstance(body, dict):
        raise BadHookBody("body", "must be a JSON object, as the host's hook sends")
    for name in REQUIRED:
        value = body.get(name)
        if not isinstance(value, str) or not value.strip():
            raise BadHookBody(name, "is required and must be a non-empty string")
    if len(body["session_id"]) > 200:
        raise BadHookBody("session_id", "is longer than 200 characters")
    for name in TEXT_FIELDS:
        if name in body and body[name] is not None and not isinstance(body[name], str):
            raise BadHookBody(name, "must be a string")
    if "tool_input" in body and not isinstance(body["tool_input"], dict):
        raise BadHookBody("tool_input", "must be an object")
    if "stop_hook_active" in body and not isinstance(body["stop_hook_active"], bool):
        raise BadHookBody("stop_hook_active", "must be true or false")
    if "permission_suggestions" in body and not isinstance(body["permission_suggestions"], list):
        raise BadHookBody("permission_suggestions", "must be a list")
    duration = body.get("duration_ms")
    if duration is not None and (isinstance(duration, bool) or not isinstance(duration, int | float) or duration < 0):
        raise BadHookBody("duration_ms", "must be a number of milliseconds")
    return HookCall(event=body["hook_event_name"], session_id=body["session_id"], body=body, host=host)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def bounded(value: Any, limit: int = TEXT_LIMIT) -> tuple[str, int]:
    """(what is kept, full size in characters): text as is, anything else as JSON."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(text) <= limit:
        return text, len(text)
    return text[: limit - 1] + "…", len(text)


def summarise(tool_name: str, tool_input: Any) -> str:
    inputs = tool_input if isinstance(tool_input, dict) else {}
    detail = ""
    for key in ("command", "file_path", "path", "pattern", "url", "query", "description", "prompt"):
        if isinstance(inputs.get(key), str) and inputs[key].strip():
            detail = inputs[key].strip().splitlines()[0]
            break
    said = f"{tool_name}: {detail}" if detail else tool_name or "a tool"
    return said if len(said) <= SUMMARY_LIMIT else said[: SUMMARY_LIMIT - 1] + "…"


def outcome(tool_response: Any) -> str:
    """How a tool use ended, as far as its response tells: ok, error or interrupted."""
    if isinstance(tool_response, dict):
        if tool_response.get("interrupted"):
            return "interrupted"
        if tool_response.get("is_error") or tool_response.get("isError") or tool_response.get("error"):
            return "error"
        exit_code = tool_response.get("exit_code", tool_response.get("exitCode"))
        if isinstance(exit_code, int) and exit_code != 0:
            return "error"
    return "ok"
