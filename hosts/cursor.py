"""Cursor: its agent hooks (`.cursor/hooks.json`), answered with its `permission`, and its MCP server.

Cursor runs a command per event with the event's JSON on stdin and reads its answer on stdout
(cursor.com/docs/agent/hooks). Its shell commands and MCP tool calls wait on `beforeShellExecution` and
`beforeMCPExecution`, read here as PermissionRequests (a shell command is `Bash` with a `command`, so the
team's rules decide it as they decide every host's); the answer is `{"permission": "allow"}` or
`{"permission": "deny", "user_message": …, "agent_message": …}` (the reason for the model), and "no decision"
is `"ask"`: Cursor asks at its own prompt, with the reason beside it. A person's edit cannot be taken from
these hooks: it is refused, naming the edit.

`beforeReadFile` is a PreToolUse (`Read` with a `file_path`; the file's content Cursor sends is never kept):
a team rule may deny a read, nobody is asked about one, and what no rule denies is allowed, as Cursor would
without hooks (its read hook takes no "ask"). `afterShellExecution`, `afterMCPExecution` and `afterFileEdit`
are the session's timeline; `stop` hands people's messages over as its `followup_message` (Cursor sends it as
the next prompt; `loop_count` above 0 is a hook's own continuation, where nothing is handed over).

Cursor's agent does not install from the package registries: its hooks are tested with the payloads of its
hooks documentation as fixtures (tests/fixtures/cursor_hooks).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from hosts import settings_files
from hosts.base import NO_DECISION, Host, Setup, SetupError, allowed_as_asked, decision_of, hook_command, token_line

EVENTS = (
    "sessionStart",
    "beforeSubmitPrompt",
    "beforeShellExecution",
    "beforeMCPExecution",
    "beforeReadFile",
    "afterShellExecution",
    "afterMCPExecution",
    "afterFileEdit",
    "stop",
    "sessionEnd",
)
# Events that wait for an answer of `permission`.
ASKING = frozenset({"beforeShellExecution", "beforeMCPExecution", "beforeReadFile"})


class Cursor(Host):
    def to_claude(self, body: Any) -> Any:
        if not isinstance(body, dict):
            return body
        event = body.get("hook_event_name")
        said = super().to_claude(body)
        roots = body.get("workspace_roots")
        said.setdefault("session_id", body.get("conversation_id"))
        if not isinstance(said.get("cwd"), str):
            said["cwd"] = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else ""
        if event in ("beforeShellExecution", "afterShellExecution"):
            said.update(tool_name="Bash", host_tool_name="shell", tool_input={"command": body.get("command")})
            if event == "afterShellExecution":
                said["tool_response"] = {"output": body.get("output")}
        elif event in ("beforeMCPExecution", "afterMCPExecution"):
            said["tool_input"] = _object(body.get("tool_input"))
            # Which server the tool is of: its URL or command, so Hook Bridge's own tools need nobody's permission.
            said["mcp_server"] = body.get("url") or body.get("command") or ""
            if event == "afterMCPExecution":
                said["tool_response"] = _object(body.get("result_json"))
        elif event == "beforeReadFile":
            # The file's content is not kept: it may be the very secret a rule keeps the agent from.
            said.pop("content", None)
            said.update(tool_name="Read", host_tool_name="read_file", tool_input={"file_path": body.get("file_path")})
        elif event == "afterFileEdit":
            edits = body.get("edits")
            said.update(
                tool_name="Edit",
                host_tool_name="edit_file",
                tool_input={"file_path": body.get("file_path"), "edits": edits if isinstance(edits, list) else []},
            )
        elif event == "stop":
            loops = body.get("loop_count")
            said["stop_hook_active"] = isinstance(loops, int) and not isinstance(loops, bool) and loops > 0
        return said

    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        if event == "PermissionRequest":
            decision = decision_of(answer)
            if decision is None:
                return self.undecided(event, "")
            allowed, why = allowed_as_asked(decision)
            return {"permission": "allow"} if allowed else _denied(why)
        if event == "PreToolUse":
            output = answer.get("hookSpecificOutput")
            if isinstance(output, dict) and output.get("permissionDecision") == "deny":
                return _denied(str(output.get("permissionDecisionReason") or "Denied on Hook Bridge."))
            return {"permission": "allow"}
        if event == "Stop" and answer.get("decision") == "block":
            return {"followup_message": str(answer.get("reason") or "")}
        if event == "UserPromptSubmit":
            return {"continue": True}
        return NO_DECISION

    def undecided(self, event: str, why: str) -> dict[str, Any]:
        if event == "PermissionRequest":
            reason = why or "nobody on the team decided"
            return {"permission": "ask", "user_message": f"Hook Bridge: {reason}; asking here."}
        return self.answer(event, NO_DECISION)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--cursor-home", default=None, help="that folder instead of ~/.cursor (or DIR/.cursor)")

    def register(self, setup: Setup) -> list[str]:
        self.refuse_approve(setup)
        folder = folder_of(setup)
        hooks_file, mcp_file = folder / "hooks.json", folder / "mcp.json"
        data, mcp = settings_files.load(hooks_file), settings_files.load(mcp_file)
        command = hook_command(self.name, setup.url, headless=setup.headless)
        remove_hooks(data)
        add_hooks(data, command, hooks_file)
        settings_files.object_in(mcp, "mcpServers", mcp_file)[setup.name] = {
            "url": setup.mcp_url,
            # Cursor fills ${env:NAME} in from its environment: the token is never written into the file.
            "headers": {"Authorization": "Bearer ${env:HOOKBRIDGE_TOKEN}"},
        }
        settings_files.save(hooks_file, data)
        settings_files.save(mcp_file, mcp)
        return [
            f"Cursor: hooks ({', '.join(EVENTS)}) in {hooks_file}, and the MCP server '{setup.name}' in {mcp_file}.",
            token_line(self.title, setup.token(f"cursor ({setup.where()})", "")),
        ]

    def unregister(self, setup: Setup) -> list[str]:
        folder = folder_of(setup)
        hooks_file, mcp_file = folder / "hooks.json", folder / "mcp.json"
        data, mcp = settings_files.load(hooks_file), settings_files.load(mcp_file)
        events = remove_hooks(data)
        server = settings_files.remove_entry(mcp, "mcpServers", setup.name)
        if not events and not server:
            raise SetupError(f"nothing of Hook Bridge's is in {folder}")
        # hooks.json's "version" is ours too when nothing else is left in it.
        if set(data) == {"version"}:
            data = {}
        settings_files.save_or_remove(hooks_file, data)
        settings_files.save_or_remove(mcp_file, mcp)
        return [settings_files.removed_words(events, server, folder)]


CURSOR = Cursor(
    name="cursor",
    title="Cursor",
    path="/hooks/cursor",
    events={
        "sessionStart": "SessionStart",
        "beforeSubmitPrompt": "UserPromptSubmit",
        "beforeShellExecution": "PermissionRequest",
        "beforeMCPExecution": "PermissionRequest",
        "beforeReadFile": "PreToolUse",
        "afterShellExecution": "PostToolUse",
        "afterMCPExecution": "PostToolUse",
        "afterFileEdit": "PostToolUse",
        "stop": "Stop",
        "sessionEnd": "SessionEnd",
    },
    hands_over_at=frozenset({"Stop"}),
    registers="its hooks in ~/.cursor/hooks.json and its MCP server in ~/.cursor/mcp.json (or the project's .cursor)",
)


def folder_of(setup: Setup) -> Path:
    if setup.options.get("cursor_home"):
        return Path(setup.options["cursor_home"])
    return (setup.project.resolve() if setup.project is not None else Path.home()) / ".cursor"


def _ours(hook: Any) -> bool:
    return isinstance(hook, dict) and " hook cursor" in str(hook.get("command"))


def add_hooks(data: dict[str, Any], command: str, path: Path) -> None:
    """Our command under each event: Cursor's hooks.json is `{"version": 1, "hooks": {event: [{"command"}]}}`."""
    data.setdefault("version", 1)
    settings_files.add_handlers(data, EVENTS, {"command": command}, path)


def remove_hooks(data: dict[str, Any]) -> list[str]:
    """Remove our handlers, and the lists and object that leaves empty; the events they were under."""
    return settings_files.remove_handlers(data, _ours)


def _denied(why: str) -> dict[str, Any]:
    said = why if why.startswith("Hook Bridge:") else f"Hook Bridge: {why}"
    return {"permission": "deny", "user_message": said, "agent_message": why}


def _object(value: Any) -> dict[str, Any]:
    """A tool's input or result as an object: Cursor sends some as JSON text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {"text": value}
    return value if isinstance(value, dict) else {"value": value} if value is not None else {}
