"""GitHub Copilot CLI's settings.json and mcp-config.json: Hook Bridge's hooks and MCP server, written in and
taken out again exactly.

The hooks are user-level command hooks in `~/.copilot/settings.json` (`hooks`, keyed by event, a flat list of
handlers each), running `hookbridge hook copilot --url <server>`: Copilot CLI runs a repository's
`.github/hooks` only in a folder it trusts, a user's own everywhere. The MCP server goes into
`~/.copilot/mcp-config.json` with `Authorization: Bearer ${HOOKBRIDGE_TOKEN}`, which Copilot CLI expands from
the environment: the token is never written into a file. Every write goes through claude_config's atomic,
layout-keeping writer, so a register then an unregister gives both files back byte for byte.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from mcpapi.claude_config import ConfigError
from mcpapi.gemini_config import hookbridge_command

# PascalCase names: Copilot CLI then sends Claude Code's own bodies. Its approval hook, permissionRequest, is the
# same whatever its case (claudecode.hosts.Copilot reads it).
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop")
TIMEOUT_SECONDS = 600


def copilot_home() -> Path:
    return Path.home() / ".copilot"


def hook_command(url: str, mcp_name: str, *, headless: bool = False) -> str:
    # --mcp-server: calling Hook Bridge's own tools needs nobody's permission (Copilot CLI asks for every MCP tool).
    command = f"{hookbridge_command()} hook copilot --url {shlex.quote(url)} --mcp-server {shlex.quote(mcp_name)}"
    return command + (" --undecided deny" if headless else "")


def _ours(hook: Any) -> bool:
    return isinstance(hook, dict) and " hook copilot" in str(hook.get("bash"))


def add(data: dict[str, Any], command: str, mcp: dict[str, Any], mcp_name: str, mcp_url: str) -> None:
    """Our hook under each event (an earlier one of ours replaced), and the MCP server entry in `mcp`."""
    remove_hooks(data)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError("'hooks' in the settings is not an object; refusing to touch it")
    for event in EVENTS:
        handlers = hooks.setdefault(event, [])
        if not isinstance(handlers, list):
            raise ConfigError(f"'hooks.{event}' in the settings is not a list; refusing to touch it")
        handlers.append({"type": "command", "bash": command, "timeoutSec": TIMEOUT_SECONDS})
    servers = mcp.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError("'mcpServers' in mcp-config.json is not an object; refusing to touch it")
    servers[mcp_name] = {
        "type": "http",
        "url": mcp_url,
        "headers": {"Authorization": "Bearer ${HOOKBRIDGE_TOKEN}"},
        "tools": ["*"],
    }


def remove_hooks(data: dict[str, Any]) -> list[str]:
    """Remove our handlers, and the lists and object that leaves empty; the events they were under."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    removed = []
    for event in list(hooks):
        handlers = hooks[event]
        if isinstance(handlers, list) and any(_ours(handler) for handler in handlers):
            removed.append(event)
            kept = [handler for handler in handlers if not _ours(handler)]
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks:
        del data["hooks"]
    return removed


def remove_server(mcp: dict[str, Any], mcp_name: str) -> bool:
    servers = mcp.get("mcpServers")
    if not isinstance(servers, dict) or mcp_name not in servers:
        return False
    del servers[mcp_name]
    if not servers:
        del mcp["mcpServers"]
    return True
