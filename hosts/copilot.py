"""GitHub Copilot CLI: its command hooks, its permissionRequest, its settings.json and mcp-config.json.

Registered under the PascalCase event names, Copilot CLI sends Claude Code's own bodies (`hook_event_name`,
`session_id`, `tool_name` "Bash" with a `command`), so they pass as they are. Its approval is its
`permissionRequest` hook, which has one shape whatever the case of its name: camelCase (`hookName`,
`sessionId`, `toolName` "bash", `toolInput`), read here as a PermissionRequest; its answer is
`{"behavior": "allow" | "deny", "message": …}` at the top level, and `{}` leaves it to Copilot's own
permission flow (its prompt, or in `copilot -p` a refusal: "no one to approve"). It cannot take an edited
command from a hook: an edit is sent as a deny naming it. It reads a command hook's answer to postToolUse not
at all; its Stop takes {"decision": "block", "reason"}.

The hooks are user-level command hooks in `~/.copilot/settings.json` (`hooks`, keyed by event, a flat list of
handlers each), running `hookbridge hook copilot --url <server>`: Copilot CLI runs a repository's
`.github/hooks` only in a folder it trusts, a user's own everywhere. The MCP server goes into
`~/.copilot/mcp-config.json` with `Authorization: Bearer ${HOOKBRIDGE_TOKEN}`, which Copilot CLI expands from
the environment: the token is never written into a file. Every write goes through settings_files' atomic,
layout-keeping writer, so a register then an unregister gives both files back byte for byte.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from hosts import settings_files
from hosts.base import NO_DECISION, Host, Setup, SetupError, allowed_as_asked, decision_of, hook_command, token_line

# PascalCase names: Copilot CLI then sends Claude Code's own bodies. Its approval hook, permissionRequest, is the
# same whatever its case (Copilot.to_claude reads it).
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop")
TIMEOUT_SECONDS = 600


def copilot_home() -> Path:
    return Path.home() / ".copilot"


def _ours(hook: Any) -> bool:
    return isinstance(hook, dict) and " hook copilot" in str(hook.get("bash"))


def add(data: dict[str, Any], command: str, mcp: dict[str, Any], mcp_name: str, mcp_url: str, home: Path) -> None:
    """Our hook under each event (an earlier one of ours replaced), and the MCP server entry in `mcp`."""
    remove_hooks(data)
    handler = {"type": "command", "bash": command, "timeoutSec": TIMEOUT_SECONDS}
    settings_files.add_handlers(data, EVENTS, handler, home / "settings.json")
    settings_files.object_in(mcp, "mcpServers", home / "mcp-config.json")[mcp_name] = {
        "type": "http",
        "url": mcp_url,
        "headers": {"Authorization": "Bearer ${HOOKBRIDGE_TOKEN}"},
        "tools": ["*"],
    }


def remove_hooks(data: dict[str, Any]) -> list[str]:
    """Remove our handlers, and the lists and object that leaves empty; the events they were under."""
    return settings_files.remove_handlers(data, _ours)


class Copilot(Host):
    def to_claude(self, body: Any) -> Any:
        if not isinstance(body, dict) or body.get("hookName") != "permissionRequest":
            return super().to_claude(body)
        tool = body.get("toolName")
        said = {key: value for key, value in body.items() if key not in ("hookName", "sessionId", "toolName")}
        said.update(
            hook_event_name="PermissionRequest",
            host_event_name="permissionRequest",
            session_id=body.get("sessionId"),
            tool_name=self.tools.get(tool, tool) if isinstance(tool, str) else tool,
            tool_input=said.pop("toolInput", None),
            permission_suggestions=said.pop("permissionSuggestions", []),
        )
        if isinstance(tool, str) and tool in self.tools:
            said["host_tool_name"] = tool
        return said

    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        if event != "PermissionRequest":
            return answer
        decision = decision_of(answer)
        if decision is None:
            return NO_DECISION
        allowed, why = allowed_as_asked(decision)
        return {"behavior": "allow"} if allowed else {"behavior": "deny", "message": why}

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--copilot-home", default=None, help="that folder instead of ~/.copilot")

    def register(self, setup: Setup) -> list[str]:
        self.refuse_approve(setup)
        home = home_of(setup)
        settings, mcp_file = home / "settings.json", home / "mcp-config.json"
        # --mcp-server: calling Hook Bridge's own tools needs nobody's permission (Copilot CLI asks for every MCP tool).
        command = hook_command(
            self.name, setup.url, headless=setup.headless, extra=f" --mcp-server {shlex.quote(setup.name)}"
        )
        data, mcp = settings_files.load(settings), settings_files.load(mcp_file)
        add(data, command, mcp, setup.name, setup.mcp_url, home)
        settings_files.save(settings, data)
        settings_files.save(mcp_file, mcp)
        return [
            f"Copilot CLI: hooks ({', '.join(EVENTS)}) in {settings}, and the MCP server '{setup.name}' in {mcp_file}.",
            token_line(self.title, setup.token("copilot (user)", "")),
        ]

    def unregister(self, setup: Setup) -> list[str]:
        home = home_of(setup)
        settings, mcp_file = home / "settings.json", home / "mcp-config.json"
        data, mcp = settings_files.load(settings), settings_files.load(mcp_file)
        events = remove_hooks(data)
        server = settings_files.remove_entry(mcp, "mcpServers", setup.name)
        if not events and not server:
            raise SetupError(f"nothing of Hook Bridge's is in {home}")
        # A file that held only what register wrote goes with it, as it was not there before.
        settings_files.save_or_remove(settings, data)
        settings_files.save_or_remove(mcp_file, mcp)
        return [settings_files.removed_words(events, server, home)]


# Copilot CLI's permissionRequest names its tools in lower case ("bash"); its PascalCase hooks already say "Bash".
COPILOT = Copilot(
    name="copilot",
    title="Copilot CLI",
    path="/hooks/copilot",
    tools={"bash": "Bash"},
    hands_over_at=frozenset({"Stop"}),
    registers="its command hooks in ~/.copilot/settings.json and its MCP server in ~/.copilot/mcp-config.json",
)


def home_of(setup: Setup) -> Path:
    return Path(setup.options["copilot_home"]) if setup.options.get("copilot_home") else copilot_home()
