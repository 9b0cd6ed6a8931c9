"""Kiro CLI: its hook files (`.kiro/hooks/*.json`, Kiro CLI 3's format), which can only block: exit code 2, the
reason on stderr.

Kiro runs a command hook with the event as JSON on stdin: `hook_event_name`, `cwd`, and for a tool `tool_name`
and `tool_input` (after it, `tool_response`) (kiro.dev/docs/cli/hooks). A PreToolUse hook that exits 2 blocks the
tool and Kiro hands its stderr to the model; any other exit lets Kiro go on with its own permissions (a tool not
in the agent's `allowedTools` is asked at its prompt). So the team's deny is a block with the reason, an allow
goes on, and nobody deciding goes on to Kiro's own prompt (`--headless`: nobody deciding blocks).

Kiro names no session: a run of Kiro is one session here (the process that runs the hook, in its folder), unless a
body carries a `session_id`. Its shell command (`execute_bash`; `shell` in Kiro 3) and MCP tools (`@server/tool`)
ask the team; reads and writes (`fs_read`/`read`, `fs_write`/`write`) are decided by the team's rules alone; the
rest makes the session's timeline. Kiro 2's event names (`preToolUse`, in an agent's `hooks`) are read beside Kiro
3's (`PreToolUse`). Kiro CLI does not install from the registries here: its hooks are tested with the payloads of
its hooks documentation as fixtures (tests/fixtures/kiro_hooks).
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import Any

from hosts import settings_files
from hosts.base import BlockOnly, Hooked, Setup, SetupError, hook_command, token_line

# Kiro 3's trigger → Claude Code's event; Kiro 2's names are the same in camelCase (agentSpawn for SessionStart).
TRIGGERS = {
    "SessionStart": "SessionStart",
    "UserPromptSubmit": "UserPromptSubmit",
    "PreToolUse": "PreToolUse",
    "PostToolUse": "PostToolUse",
    "Stop": "Stop",
}
ASKED = ("execute_bash", "shell")
FILE = "hookbridge.json"
TIMEOUT_SECONDS = 600


class Kiro(BlockOnly):
    def read_hook(self, raw: str, hooked: Hooked) -> str:
        try:
            body: Any = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(body, dict):
            # One run of Kiro: the process that ran this hook.
            body.setdefault("session_id", f"kiro-{hooked.parent_pid}")
            body.setdefault("cwd", hooked.cwd)
        return json.dumps(body)

    def to_claude(self, body: Any) -> Any:
        if not isinstance(body, dict):
            return body
        said = dict(body)
        event = body.get("hook_event_name")
        tool = body.get("tool_name")
        found = body.get("tool_input")
        given: dict[str, Any] = found if isinstance(found, dict) else {}
        if isinstance(event, str):
            said["hook_event_name"] = self.events.get(event, event)
            said["host_event_name"] = event
        if not isinstance(tool, str):
            return said
        said["host_tool_name"] = tool
        if tool in ASKED:
            said.update(tool_name="Bash", tool_input={"command": given.get("command")})
        elif tool in ("fs_read", "read"):
            said.update(tool_name="Read", tool_input={"file_path": _read_path(given)})
        elif tool in ("fs_write", "write"):
            said.update(_written(given))
        elif tool.startswith("@") and "/" in tool:
            server, _, name = tool[1:].partition("/")
            said["tool_name"] = f"mcp__{server}__{name}"
        asked = tool in ASKED or tool.startswith("@")
        if said.get("hook_event_name") == "PreToolUse" and asked:
            said["hook_event_name"] = "PermissionRequest"
        return said

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--hooks-file", default=None, help=f"that hook file instead of ~/.kiro/hooks/{FILE} (or the project's)"
        )

    def register(self, setup: Setup) -> list[str]:
        self.refuse_approve(setup)
        path = hooks_path(setup)
        data = settings_files.load(path)
        _, kept = _split(data, path)
        command = hook_command(
            self.name, setup.url, headless=setup.headless, extra=f" --mcp-server {shlex.quote(setup.name)}"
        )
        timeout = setup.timeout or TIMEOUT_SECONDS
        data["version"] = data.get("version", "v1")
        data["hooks"] = kept + [_hook(trigger, command, timeout) for trigger in TRIGGERS]
        settings_files.save(path, data)
        return [
            f"Kiro CLI: hooks ({', '.join(TRIGGERS)}) in {path}; a tool use waits up to {timeout} s for the team.",
            token_line(self.title, setup.token(f"kiro ({setup.where()})", "")),
        ]

    def unregister(self, setup: Setup) -> list[str]:
        path = hooks_path(setup)
        data = settings_files.load(path)
        ours, kept = _split(data, path)
        if not ours:
            raise SetupError(f"nothing of Hook Bridge's is in {path}")
        data["hooks"] = kept
        # The file register made goes, unless the person keeps hooks of their own in it.
        settings_files.save_or_remove(path, data if kept or set(data) - {"version", "hooks"} else {})
        return [settings_files.removed_words([str(hook.get("trigger")) for hook in ours], False, path)]


KIRO = Kiro(
    name="kiro",
    title="Kiro CLI",
    path="/hooks/kiro",
    events={
        **TRIGGERS,
        **{key[0].lower() + key[1:]: value for key, value in TRIGGERS.items()},
        "agentSpawn": "SessionStart",
    },
    # Kiro hands a hook's words to its model only with a block: nothing can be handed over.
    hands_over_at=frozenset(),
    registers=f"its hooks in ~/.kiro/hooks/{FILE} (or the project's .kiro/hooks/{FILE})",
)


def hooks_path(setup: Setup) -> Path:
    if setup.options.get("hooks_file"):
        return Path(setup.options["hooks_file"])
    if setup.project is not None:
        return setup.project.resolve() / ".kiro" / "hooks" / FILE
    return Path.home() / ".kiro" / "hooks" / FILE


def _hook(trigger: str, command: str, timeout: int) -> dict[str, Any]:
    hook: dict[str, Any] = {
        "name": f"hookbridge-{trigger}",
        "trigger": trigger,
        "action": {"type": "command", "command": command},
        # Only a tool use waits for a person; the rest is recorded at once.
        "timeout": timeout if trigger == "PreToolUse" else 30,
        "enabled": True,
    }
    if trigger in ("PreToolUse", "PostToolUse"):
        hook["matcher"] = ".*"
    return hook


def _split(data: dict[str, Any], path: Path) -> tuple[list[Any], list[Any]]:
    """The file's hooks: (ours, the person's own)."""
    hooks = data.get("hooks", [])
    if not isinstance(hooks, list):
        raise SetupError(f"'hooks' in {path} is not a list; refusing to touch it")
    return [hook for hook in hooks if _ours(hook)], [hook for hook in hooks if not _ours(hook)]


def _ours(hook: Any) -> bool:
    action = hook.get("action") if isinstance(hook, dict) else None
    return isinstance(action, dict) and " hook kiro " in f"{action.get('command')} "


def _read_path(given: dict[str, Any]) -> Any:
    operations = given.get("operations")
    if isinstance(operations, list) and operations and isinstance(operations[0], dict):
        return operations[0].get("path")
    return given.get("path")


def _written(given: dict[str, Any]) -> dict[str, Any]:
    if given.get("command") == "create":
        return {"tool_name": "Write", "tool_input": {"file_path": given.get("path"), "content": given.get("file_text")}}
    return {
        "tool_name": "Edit",
        "tool_input": {
            "file_path": given.get("path"),
            "old_string": given.get("old_str", ""),
            "new_string": given.get("new_str", ""),
        },
    }
