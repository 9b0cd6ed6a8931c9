"""Amp: its permission rules (`amp.permissions`) delegate the decision to `hookbridge hook amp`.

A rule whose action is `delegate` makes Amp run a program before the tool call: the tool's arguments as JSON on
its stdin, the tool's name in `AGENT_TOOL_NAME`, and its answer in its exit code: 0 allows, 1 asks the person at
Amp's own prompt, 2 (or more) rejects, with what the program wrote on stderr as the reason the model reads
(Amp 0.0.1790142911, as `amp permissions test` runs it). Amp sends no session and no event: a run of Amp is one
session here (the hook's parent process, in its working folder), and every delegated call asks the team.

Amp's `to` names a program, with no arguments, so `register amp` writes a small script beside Amp's settings
(`hookbridge-delegate`, running `hookbridge hook amp --url <server>`) and rules delegating Amp's shell command,
edits and new files to it, first in `amp.permissions`: the first rule that matches decides, so the team's
decision comes before the person's own rules for those tools (theirs still decide every other tool). `Bash` is
Claude Code's with `cmd` for `command`; `edit_file` an `Edit`, `create_file` a `Write`.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from hosts import settings_files
from hosts.base import Hooked, Host, Setup, SetupError, allowed_as_asked, decision_of, hook_command, token_line

# The tools whose every call asks the team.
DELEGATED = ("Bash", "edit_file", "create_file")
SCRIPT = "hookbridge-delegate"
MARK = "# Hook Bridge's delegate, written by `hookbridge register amp`; `hookbridge unregister amp` removes it."
EXIT = {"allow": 0, "ask": 1, "reject": 2}


class Amp(Host):
    def read_hook(self, raw: str, hooked: Hooked) -> str:
        try:
            arguments: Any = json.loads(raw)
        except ValueError:
            arguments = None
        return json.dumps(
            {
                "hook_event_name": "delegate",
                # One run of Amp: the process that ran this hook.
                "session_id": f"amp-{hooked.parent_pid}",
                "cwd": hooked.cwd,
                "tool_name": hooked.environ.get("AGENT_TOOL_NAME", ""),
                "tool_input": arguments if isinstance(arguments, dict) else {},
            }
        )

    def to_claude(self, body: Any) -> Any:
        said = super().to_claude(body)
        if not isinstance(said, dict):
            return said
        found = said.get("tool_input")
        given: dict[str, Any] = found if isinstance(found, dict) else {}
        tool = said.get("host_tool_name")
        if tool == "edit_file":
            said["tool_input"] = {
                "file_path": given.get("path"),
                "old_string": given.get("old_str", ""),
                "new_string": given.get("new_str", ""),
            }
        elif tool == "create_file":
            said["tool_input"] = {"file_path": given.get("path"), "content": given.get("content", "")}
        elif said.get("tool_name") == "Bash" and "cmd" in given:
            said["tool_input"] = {"command": given["cmd"], **({"cwd": given["cwd"]} if "cwd" in given else {})}
            said["host_tool_name"] = "Bash"
        return said

    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        decision = decision_of(answer) if event == "PermissionRequest" else None
        if decision is None:
            return self.undecided(event, "")
        allowed, why = allowed_as_asked(decision)
        return {"action": "allow"} if allowed else {"action": "reject", "message": why}

    def undecided(self, event: str, why: str) -> dict[str, Any]:
        return {"action": "ask", "message": f"Hook Bridge: {why or 'nobody on the team decided'}; asking here."}

    def deliver(self, said: dict[str, Any]) -> tuple[str, str, int]:
        action = said.get("action")
        message = str(said.get("message") or "")
        return "", message + ("\n" if message else ""), EXIT.get(str(action), EXIT["ask"])

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--settings-file", default=None, help="that settings file instead of ~/.config/amp/settings.json"
        )

    def register(self, setup: Setup) -> list[str]:
        self.refuse_approve(setup)
        path = settings_path(setup)
        script = path.parent / SCRIPT
        if script.exists() and not is_ours(script):
            raise SetupError(f"{script} is not Hook Bridge's; refusing to overwrite it")
        data = settings_files.load(path)
        rules = data.setdefault("amp.permissions", [])
        if not isinstance(rules, list):
            raise SetupError(f"'amp.permissions' in {path} is not a list; refusing to touch it")
        kept = [rule for rule in rules if not _ours(rule, script)]
        data["amp.permissions"] = [{"tool": tool, "action": "delegate", "to": str(script)} for tool in DELEGATED] + kept
        command = hook_command(self.name, setup.url, headless=setup.headless)
        settings_files.write_script(script, MARK, command)
        settings_files.save(path, data)
        return [
            f"Amp: its {', '.join(DELEGATED)} calls delegated to {script}, first in amp.permissions in {path}.",
            token_line(self.title, setup.token(f"amp ({setup.where()})", "")),
        ]

    def unregister(self, setup: Setup) -> list[str]:
        path = settings_path(setup)
        script = path.parent / SCRIPT
        data = settings_files.load(path)
        rules = data.get("amp.permissions")
        ours = [rule for rule in rules if _ours(rule, script)] if isinstance(rules, list) else []
        if not ours and not is_ours(script):
            raise SetupError(f"nothing of Hook Bridge's is in {path}")
        if isinstance(rules, list):
            data["amp.permissions"] = [rule for rule in rules if not _ours(rule, script)]
            if not data["amp.permissions"]:
                del data["amp.permissions"]
        settings_files.save_or_remove(path, data)
        if is_ours(script):
            script.unlink()
        return [f"Removed the delegate rules ({len(ours)}) from {path}, and {script}."]


AMP = Amp(
    name="amp",
    title="Amp",
    path="/hooks/amp",
    events={"delegate": "PermissionRequest"},
    tools={"edit_file": "Edit", "create_file": "Write"},
    # Amp hands a delegate's words to its model only with a rejection: nothing can be handed over.
    hands_over_at=frozenset(),
    registers="permission rules delegating its shell commands and edits, in ~/.config/amp/settings.json",
)


def settings_path(setup: Setup) -> Path:
    if setup.options.get("settings_file"):
        return Path(setup.options["settings_file"])
    if setup.project is not None:
        return setup.project.resolve() / ".amp" / "settings.json"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "amp" / "settings.json"


def is_ours(path: Path) -> bool:
    return settings_files.is_script_of(path, MARK)


def _ours(rule: Any, script: Path) -> bool:
    return isinstance(rule, dict) and rule.get("action") == "delegate" and rule.get("to") == str(script)
