"""Gemini CLI: its command hooks (settings.json `hooks`) and its MCP server, in its own words.

BeforeTool gates a tool (exit code 0 and JSON out). Its decisions: "allow", "deny" (the model reads "Tool
execution blocked: <reason>"), and "ask", which makes the CLI ask at its own prompt whatever its approval mode
(`--yolo` included): what "no decision" must be, so nothing runs that nobody allowed. `gemini -p` has no prompt
to ask at and waits on "ask" for ever (0.61), so a headless registration refuses instead (`--undecided deny`).
Its AfterAgent is Claude Code's Stop: the turn's last words are its `prompt_response`, and a "block" with a
reason sends the reason to the model as the next prompt (then AfterAgent comes again, `stop_hook_active`).

`register gemini` writes command hooks running `hookbridge hook gemini --url <server>` and the MCP server, in
~/.gemini/settings.json or a project's .gemini/settings.json; the token comes from the environment
($HOOKBRIDGE_TOKEN, which Gemini CLI passes to its hooks and expands in its settings), never from the file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hosts import settings_files
from hosts.base import NO_DECISION, Host, Setup, SetupError, decision_of, hook_command, token_line

# BeforeTool gates these (a shell command, a write, an edit) unless --approve names others; the other events
# only tell the session's timeline.
GATED = "run_shell_command|write_file|replace"
EVENTS = ("BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "SessionStart", "SessionEnd")
TOOL_EVENTS = ("BeforeTool", "AfterTool")
HOOK_NAME = "hookbridge"


class Gemini(Host):
    def to_claude(self, body: Any) -> Any:
        said = super().to_claude(body)
        if isinstance(said, dict) and said.get("host_event_name") == "AfterAgent" and "prompt_response" in said:
            said["last_assistant_message"] = said["prompt_response"]
        return said

    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        if event == "Stop":
            # Claude Code's {"decision": "block", "reason": …} is Gemini's own: the reason is the model's next prompt.
            return answer
        if event == "PermissionRequest":
            decision = decision_of(answer)
            if decision is None:
                return self.undecided(event, "")
            if decision.get("behavior") != "allow":
                return {"decision": "deny", "reason": str(decision.get("message") or "Denied on Hook Bridge.")}
            allowed: dict[str, Any] = {"decision": "allow"}
            if isinstance(decision.get("updatedInput"), dict):
                allowed["hookSpecificOutput"] = {"hookEventName": "BeforeTool", "tool_input": decision["updatedInput"]}
            return allowed
        output = answer.get("hookSpecificOutput")
        if isinstance(output, dict) and "additionalContext" in output:
            # People's messages and late answers, handed to the model after a tool ran.
            return {
                "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": output["additionalContext"]}
            }
        return NO_DECISION

    def undecided(self, event: str, why: str) -> dict[str, Any]:
        if event != "PermissionRequest":
            return NO_DECISION
        # The CLI's UI shows systemMessage beside its own prompt, not what the hook wrote on stderr.
        reason = f"{why}; asking here" if why else "nobody on the team decided; asking here"
        return {"decision": "ask", "systemMessage": f"Hook Bridge: {reason}."}

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--settings-file", default=None, help="that settings file instead")

    def register(self, setup: Setup) -> list[str]:
        path = settings_file(setup)
        data = settings_files.load(path)
        command = hook_command(self.name, setup.url, headless=setup.headless)
        added = add(data, command, setup.timeout or 600, setup.name, setup.mcp_url, setup.approve or GATED, path)
        settings_files.save(path, data)
        events = ", ".join(added) or "none new (already there)"
        return [
            f"Gemini CLI: hooks ({events}) and the MCP server '{setup.name}' in {path}.",
            token_line(self.title, setup.token(f"gemini ({setup.where()})", "")),
        ]

    def unregister(self, setup: Setup) -> list[str]:
        path = settings_file(setup)
        data = settings_files.load(path)
        removed = remove(data, setup.name)
        if not removed:
            raise SetupError(f"nothing of Hook Bridge's is in {path}")
        settings_files.save(path, data)
        return [f"Removed {', '.join(removed)} from {path}."]


GEMINI = Gemini(
    name="gemini",
    title="Gemini CLI",
    path="/hooks/gemini",
    events={
        "BeforeTool": "PermissionRequest",
        "AfterTool": "PostToolUse",
        "BeforeAgent": "UserPromptSubmit",
        "AfterAgent": "Stop",
        "SessionStart": "SessionStart",
        "SessionEnd": "SessionEnd",
    },
    tools={"run_shell_command": "Bash", "write_file": "Write", "replace": "Edit", "read_file": "Read"},
    registers="its command hooks and its MCP server (trusted) in ~/.gemini/settings.json or the project's",
)


def settings_path(project: Path | None) -> Path:
    """A project's .gemini/settings.json, or the user's ~/.gemini/settings.json."""
    return (project / ".gemini" / "settings.json") if project is not None else Path.home() / ".gemini" / "settings.json"


def settings_file(setup: Setup) -> Path:
    if setup.options.get("settings_file"):
        return Path(setup.options["settings_file"])
    return settings_path(setup.project.resolve() if setup.project is not None else None)


def _ours(hook: Any) -> bool:
    return isinstance(hook, dict) and hook.get("name") == HOOK_NAME and " hook gemini" in str(hook.get("command"))


def add(
    data: dict[str, Any], command: str, timeout_seconds: int, mcp_name: str, mcp_url: str, gated: str, path: Path
) -> list[str]:
    """Add the hooks (once) and the MCP server entry; returns the events hooks were added to."""
    entry = {"name": HOOK_NAME, "type": "command", "command": command, "timeout": timeout_seconds * 1000}
    added = settings_files.add_hooks(data, EVENTS, entry, gated, ours=_ours, tool_events=TOOL_EVENTS)
    servers = settings_files.object_in(data, "mcpServers", path)
    # Trusted: Gemini CLI's terminal UI would otherwise ask its own permission before every ask_question, a second
    # question in front of the one the agent is putting to the team.
    servers[mcp_name] = {"httpUrl": mcp_url, "headers": {"Authorization": "Bearer $HOOKBRIDGE_TOKEN"}, "trust": True}
    return added


def remove(data: dict[str, Any], mcp_name: str) -> list[str]:
    """Remove our hooks and MCP entry, and the groups, lists and objects that leaves empty; what was removed."""
    removed = settings_files.remove_hooks_where(data, _ours)
    if settings_files.remove_entry(data, "mcpServers", mcp_name):
        removed.append(f"mcpServers.{mcp_name}")
    return removed
