"""Windsurf: its Cascade hooks (`hooks.json`), which can only block: exit code 2, the reason on stderr.

Cascade runs a command per hook with a JSON envelope on stdin (`agent_action_name`, `trajectory_id` — the
session —, `execution_id`, and the action's detail in `tool_info`; docs.windsurf.com/windsurf/cascade/hooks). A
pre-hook that exits 2 blocks the action and its stderr is shown (`show_output`); anything else lets Cascade go on
with its own settings (its own approval of a command, or its auto-execution). So the team's deny is a block with
the reason, an allow goes on, and "no decision" goes on to Cascade's own approval: Windsurf has no "ask" a hook
can return (`--headless`: nobody deciding blocks).

A command (`pre_run_command`: `command_line`, `cwd`) and an MCP tool (`pre_mcp_tool_use`) ask the team; a read
or a write (`pre_read_code`, `pre_write_code`) is decided by the team's rules alone, nobody asked; the `post_*`
actions and the prompt make the session's timeline. Windsurf does not install from the registries here: its
hooks are tested with the payloads of its hooks documentation as fixtures (tests/fixtures/windsurf_hooks).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hosts import settings_files
from hosts.base import BlockOnly, Setup, SetupError, hook_command, token_line

EVENTS = (
    "pre_user_prompt",
    "pre_run_command",
    "pre_mcp_tool_use",
    "pre_read_code",
    "pre_write_code",
    "post_run_command",
    "post_write_code",
    "post_mcp_tool_use",
    "post_cascade_response",
)


class Windsurf(BlockOnly):
    def to_claude(self, body: Any) -> Any:
        if not isinstance(body, dict):
            return body
        event = body.get("agent_action_name")
        said = {key: value for key, value in body.items() if key != "tool_info"}
        found = body.get("tool_info")
        info: dict[str, Any] = found if isinstance(found, dict) else {}
        if isinstance(event, str):
            said["hook_event_name"] = self.events.get(event, event)
            said["host_event_name"] = event
        said["session_id"] = body.get("trajectory_id")
        if isinstance(info.get("cwd"), str):
            said["cwd"] = info["cwd"]
        if event in ("pre_run_command", "post_run_command"):
            said.update(
                tool_name="Bash", host_tool_name="run_command", tool_input={"command": info.get("command_line")}
            )
        elif event in ("pre_read_code", "post_read_code"):
            said.update(tool_name="Read", host_tool_name="read_code", tool_input={"file_path": info.get("file_path")})
        elif event in ("pre_write_code", "post_write_code"):
            edits = info.get("edits") if isinstance(info.get("edits"), list) else []
            said.update(
                tool_name="Edit",
                host_tool_name="write_code",
                tool_input={"file_path": info.get("file_path"), "edits": edits},
            )
        elif event in ("pre_mcp_tool_use", "post_mcp_tool_use"):
            server, tool = info.get("mcp_server_name"), info.get("mcp_tool_name")
            arguments = info.get("mcp_tool_arguments")
            said.update(
                tool_name=f"mcp__{server}__{tool}",
                host_tool_name=str(tool),
                tool_input=arguments if isinstance(arguments, dict) else {},
            )
        elif event == "pre_user_prompt" and isinstance(info.get("user_prompt"), str):
            said["prompt"] = info["user_prompt"]
        elif event == "post_cascade_response" and isinstance(info.get("response"), str):
            said["last_assistant_message"] = info["response"]
        return said

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--hooks-file", default=None, help="that hooks.json instead of ~/.codeium/windsurf/hooks.json"
        )

    def register(self, setup: Setup) -> list[str]:
        self.refuse_approve(setup)
        path = hooks_path(setup)
        data = settings_files.load(path)
        remove_hooks(data)
        command = hook_command(self.name, setup.url, headless=setup.headless)
        settings_files.add_handlers(data, EVENTS, {"command": command, "show_output": True}, path)
        settings_files.save(path, data)
        return [
            f"Windsurf: hooks ({', '.join(EVENTS)}) in {path}.",
            token_line(self.title, setup.token(f"windsurf ({setup.where()})", "")),
        ]

    def unregister(self, setup: Setup) -> list[str]:
        path = hooks_path(setup)
        data = settings_files.load(path)
        events = remove_hooks(data)
        if not events:
            raise SetupError(f"nothing of Hook Bridge's is in {path}")
        settings_files.save_or_remove(path, data)
        return [settings_files.removed_words(events, False, path)]


WINDSURF = Windsurf(
    name="windsurf",
    title="Windsurf",
    path="/hooks/windsurf",
    events={
        "pre_user_prompt": "UserPromptSubmit",
        "pre_run_command": "PermissionRequest",
        "pre_mcp_tool_use": "PermissionRequest",
        "pre_read_code": "PreToolUse",
        "pre_write_code": "PreToolUse",
        "post_run_command": "PostToolUse",
        "post_write_code": "PostToolUse",
        "post_mcp_tool_use": "PostToolUse",
        "post_cascade_response": "Stop",
    },
    # A hook's words reach Cascade only with a block: nothing can be handed over.
    hands_over_at=frozenset(),
    registers="its Cascade hooks in ~/.codeium/windsurf/hooks.json (or the project's .windsurf/hooks.json)",
)


def hooks_path(setup: Setup) -> Path:
    if setup.options.get("hooks_file"):
        return Path(setup.options["hooks_file"])
    if setup.project is not None:
        return setup.project.resolve() / ".windsurf" / "hooks.json"
    return Path.home() / ".codeium" / "windsurf" / "hooks.json"


def _ours(hook: Any) -> bool:
    return isinstance(hook, dict) and " hook windsurf" in str(hook.get("command"))


def remove_hooks(data: dict[str, Any]) -> list[str]:
    return settings_files.remove_handlers(data, _ours)
