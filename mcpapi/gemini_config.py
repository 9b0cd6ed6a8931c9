"""Gemini CLI's settings.json: Hook Bridge's hooks and MCP server written in, and taken out again exactly.

The hooks are command hooks running `hookbridge hook gemini --url <server>`; the token comes from the
environment ($HOOKBRIDGE_TOKEN, which Gemini CLI passes to its hooks and expands in its settings), never
from the file. Every write goes through claude_config's atomic, layout-keeping writer, so a register then an
unregister gives the file back byte for byte.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from mcpapi import claude_config
from mcpapi.claude_config import ConfigError

# BeforeTool gates these (a shell command, a write, an edit); the others only tell the session's timeline.
GATED = "run_shell_command|write_file|replace"
EVENTS = ("BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "SessionStart", "SessionEnd")
TOOL_EVENTS = ("BeforeTool", "AfterTool")
HOOK_NAME = "hookbridge"


def settings_path(project: Path | None) -> Path:
    """A project's .gemini/settings.json, or the user's ~/.gemini/settings.json."""
    return (project / ".gemini" / "settings.json") if project is not None else Path.home() / ".gemini" / "settings.json"


def hookbridge_command() -> str:
    """The installed `hookbridge` beside this Python (a venv's bin/), else on PATH, else this Python's module."""
    beside = Path(sys.executable).parent / "hookbridge"
    if beside.exists():
        return shlex.quote(str(beside))
    found = shutil.which("hookbridge")
    return shlex.quote(found) if found else f"{shlex.quote(sys.executable)} -m hookbridge_site.cli"


def hook_command(url: str, *, headless: bool = False) -> str:
    # Headless (`gemini -p`): nobody is at the CLI's prompt, so what nobody decided is refused, not asked.
    return f"{hookbridge_command()} hook gemini --url {shlex.quote(url)}" + (" --undecided deny" if headless else "")


def _ours(hook: Any) -> bool:
    return isinstance(hook, dict) and hook.get("name") == HOOK_NAME and " hook gemini" in str(hook.get("command"))


def add(data: dict[str, Any], command: str, timeout_seconds: int, mcp_name: str, mcp_url: str) -> list[str]:
    """Add the hooks (once) and the MCP server entry; returns the events hooks were added to."""
    entry = {"name": HOOK_NAME, "type": "command", "command": command, "timeout": timeout_seconds * 1000}
    added = claude_config.add_hooks(data, EVENTS, entry, GATED, ours=_ours, tool_events=TOOL_EVENTS)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError("'mcpServers' in the settings is not an object; refusing to touch it")
    # Trusted: Gemini CLI's terminal UI would otherwise ask its own permission before every ask_question, a second
    # question in front of the one the agent is putting to the team.
    servers[mcp_name] = {"httpUrl": mcp_url, "headers": {"Authorization": "Bearer $HOOKBRIDGE_TOKEN"}, "trust": True}
    return added


def remove(data: dict[str, Any], mcp_name: str) -> list[str]:
    """Remove our hooks and MCP entry, and the groups, lists and objects that leaves empty; what was removed."""
    removed = claude_config.remove_hooks_where(data, _ours)
    servers = data.get("mcpServers")
    if isinstance(servers, dict) and mcp_name in servers:
        del servers[mcp_name]
        removed.append(f"mcpServers.{mcp_name}")
        if not servers:
            del data["mcpServers"]
    return removed
