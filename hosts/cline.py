"""Cline: its hook files (`PreToolUse`, `PostToolUse`, …: executables in a hooks folder), answered with `cancel`.

Cline runs every file named for a hook in its hooks folders (~/Documents/Cline/Hooks, $CLINE_DIR/hooks —
~/.cline/hooks —, and a project's .clinerules/hooks and .cline/hooks) with the hook's JSON on stdin, and reads
`{"cancel": bool, "errorMessage": …, "contextModification": …}` on stdout. This follows Cline's SDK as it runs
today (cline/cline, sdk/packages/core/src/hooks), where its published hook reference and its code disagree:
the body's `hookName` is the SDK's event (`tool_call`, `tool_result`, `agent_start`, `agent_end`,
`prompt_submit`, …), not the file's name, and carries the tool twice, as `tool_call: {name, input}` (the input
as the model gave it) and as the reference's `preToolUse: {toolName, parameters}` (every parameter turned into
a string); both are read, the former first. A session is Cline's `taskId`.

A tool call (`tool_call`) is a PermissionRequest: `{"cancel": true, "errorMessage": why}` refuses it (and ends
Cline's run: its SDK stops on a cancel), `{"cancel": false}` lets it go on. "No decision" is a refusal too: Cline's
CLI approves every tool itself by default (`--auto-approve true`), so a hook that said nothing would let the tool
run that nobody allowed. A person's edit cannot be handed back as it was made: it is refused, naming the edit.
After a tool (`tool_result`), people's messages go to the model as `contextModification`.

Cline gives a tool hook 120 s (its SDK's `toolCallTimeoutMs`; the reference's 30 s is older), and then goes on
as if the hook had said nothing. A person takes longer, so `register cline` makes the hook give up at 110 s
(`--timeout`) with a refusal saying so, rather than be cut off and let the tool run; a decision made later finds
the card gone.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from hosts import settings_files
from hosts.base import NO_DECISION, Host, Setup, SetupError, allowed_as_asked, decision_of, hook_command, token_line

# The hook files `register cline` writes, and what each is in Claude Code's words.
FILES = ("TaskStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "TaskComplete", "TaskCancel")
# Below Cline's own 120 s, after which it would go on without the hook's answer.
TIMEOUT_SECONDS = 110
MARK = "# Hook Bridge's hook, written by `hookbridge register cline`; `hookbridge unregister cline` removes it."

# Cline's shell tools: the VS Code extension's, and its SDK's (several commands in one call).
SHELL_TOOLS = frozenset({"execute_command", "run_commands"})


class Cline(Host):
    def to_claude(self, body: Any) -> Any:
        if not isinstance(body, dict):
            return body
        said = dict(body)
        event = body.get("hookName")
        if isinstance(event, str):
            said["hook_event_name"] = self.events.get(event, event)
            said["host_event_name"] = event
        said["session_id"] = body.get("taskId")
        roots = body.get("workspaceRoots")
        said["cwd"] = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else ""
        name, given = _tool_of(body)
        if name is not None:
            tool, tool_input = _as_claude(name, given)
            said.update(tool_name=tool, tool_input=tool_input, host_tool_name=name)
        result = body.get("tool_result") if isinstance(body.get("tool_result"), dict) else None
        if result is not None:
            said["tool_response"] = {"output": result.get("output"), "error": result.get("error")}
        prompt = body.get("userPromptSubmit")
        if isinstance(prompt, dict) and isinstance(prompt.get("prompt"), str):
            said["prompt"] = prompt["prompt"]
        return said

    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        if event == "PermissionRequest":
            decision = decision_of(answer)
            if decision is None:
                return self.undecided(event, "")
            allowed, why = allowed_as_asked(decision)
            return {"cancel": False} if allowed else {"cancel": True, "errorMessage": why}
        output = answer.get("hookSpecificOutput")
        if isinstance(output, dict) and "additionalContext" in output:
            return {"cancel": False, "contextModification": str(output["additionalContext"])}
        return NO_DECISION

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--hooks-dir", default=None, help="that hooks folder instead of ~/.cline/hooks (or DIR/.clinerules/hooks)"
        )

    def undecided(self, event: str, why: str) -> dict[str, Any]:
        if event != "PermissionRequest":
            return NO_DECISION
        return {"cancel": True, "errorMessage": f"Hook Bridge: {why or 'nobody on the team decided in time'}; not run."}

    def register(self, setup: Setup) -> list[str]:
        self.refuse_approve(setup)
        folder = folder_of(setup)
        timeout = setup.timeout or TIMEOUT_SECONDS
        command = hook_command(self.name, setup.url, headless=setup.headless, extra=f" --timeout {timeout}")
        theirs = [path for path in (folder / name for name in FILES) if path.exists() and not is_ours(path)]
        if theirs:
            raise SetupError(f"{theirs[0]} is not Hook Bridge's; refusing to overwrite it")
        for name in FILES:
            path = folder / name
            settings_files.write_script(path, MARK, command)
        return [
            f"Cline: hooks ({', '.join(FILES)}) in {folder}; each gives up at {timeout} s, before Cline's own 120.",
            "Cline passes its environment to its hooks: start it where HOOKBRIDGE_TOKEN is set.",
            token_line(self.title, setup.token(f"cline ({setup.where()})", "")),
        ]

    def unregister(self, setup: Setup) -> list[str]:
        folder = folder_of(setup)
        ours = [path for path in (folder / name for name in FILES) if is_ours(path)]
        if not ours:
            raise SetupError(f"nothing of Hook Bridge's is in {folder}")
        for path in ours:
            path.unlink()
        if not any(folder.iterdir()):
            folder.rmdir()
        return [f"Removed the hooks ({', '.join(path.name for path in ours)}) from {folder}."]


CLINE = Cline(
    name="cline",
    title="Cline",
    path="/hooks/cline",
    events={
        # The SDK's names, then the hook files' (the reference's), for a body that still says those.
        "tool_call": "PermissionRequest",
        "PreToolUse": "PermissionRequest",
        "tool_result": "PostToolUse",
        "PostToolUse": "PostToolUse",
        "agent_start": "SessionStart",
        "TaskStart": "SessionStart",
        "agent_resume": "SessionStart",
        "TaskResume": "SessionStart",
        "prompt_submit": "UserPromptSubmit",
        "UserPromptSubmit": "UserPromptSubmit",
        "agent_end": "Stop",
        "TaskComplete": "Stop",
        "agent_abort": "SessionEnd",
        "TaskCancel": "SessionEnd",
        "session_shutdown": "SessionEnd",
    },
    # Only after a tool can a hook give the model words (its Stop-like hooks take none).
    hands_over_at=frozenset({"PostToolUse"}),
    registers="hook files in ~/.cline/hooks (or the project's .clinerules/hooks)",
    asks_itself=False,
)


def folder_of(setup: Setup) -> Path:
    if setup.options.get("hooks_dir"):
        return Path(setup.options["hooks_dir"])
    if setup.project is not None:
        return setup.project.resolve() / ".clinerules" / "hooks"
    return Path(os.environ.get("CLINE_DIR") or Path.home() / ".cline") / "hooks"


def is_ours(path: Path) -> bool:
    return settings_files.is_script_of(path, MARK)


def _tool_of(body: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """(the tool's name, its input) from `tool_call`/`tool_result`, else from `preToolUse`/`postToolUse`."""
    for key in ("tool_call", "tool_result"):
        call = body.get(key)
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            given = call.get("input")
            return call["name"], given if isinstance(given, dict) else {}
    for key in ("preToolUse", "postToolUse"):
        use = body.get(key)
        if isinstance(use, dict) and isinstance(use.get("toolName"), str):
            parameters = use.get("parameters")
            given = {key: _unstring(value) for key, value in parameters.items()} if isinstance(parameters, dict) else {}
            return use["toolName"], given
    return None, {}


def _unstring(value: Any) -> Any:
    """A parameter the reference's shape turned into a string, back as it was (a list stays a list)."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _as_claude(name: str, given: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Cline's tool and input as Claude Code's, where there is one; the others as Cline named them."""
    if name in SHELL_TOOLS:
        commands = given.get("commands")
        if isinstance(commands, list):
            # Several commands in one call: the team's rules read each one (a line each), as a compound command.
            lines = [_command_text(command) for command in commands]
            return "Bash", {"command": "\n".join(line for line in lines if line)}
        return "Bash", {"command": given.get("command", "")}
    path = given.get("path") if isinstance(given.get("path"), str) else given.get("file_path")
    if name == "write_to_file":
        return "Write", {"file_path": path, "content": given.get("content", "")}
    if name == "editor":
        if given.get("old_text") is None and given.get("insert_line") is None:
            return "Write", {"file_path": path, "content": given.get("new_text", "")}
        edit = {"file_path": path, "old_string": given.get("old_text") or "", "new_string": given.get("new_text", "")}
        return "Edit", {**edit, **({"insert_line": given["insert_line"]} if "insert_line" in given else {})}
    if name == "read_file":
        return "Read", {"file_path": path}
    return name, given


def _command_text(command: Any) -> str:
    if isinstance(command, dict):
        command = command.get("command")
    return command if isinstance(command, str) else ""
