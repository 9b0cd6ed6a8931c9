"""OpenCode's opencode.json and plugin folder: Hook Bridge's plugin and MCP server, written in and taken out again
exactly.

OpenCode (1.18) has no command hooks, and never calls a plugin's `permission.ask` hook; it publishes each
permission request as a `permission.asked` event to every plugin and takes a reply on its own API. So the
approval is a small plugin (PLUGIN, written to `<config>/plugin/hookbridge.js`): it POSTs the request to the
server's /hooks/opencode with $HOOKBRIDGE_TOKEN, waits while a person decides, and replies through the
client OpenCode hands its plugins. When nobody decides, or the server cannot be asked, it replies nothing and
OpenCode's own prompt asks: never a silent allow. `opencode run` rejects a request at once, before any plugin
could answer, so approvals are its terminal UI's.

The MCP server goes into opencode.json's `mcp` with `Authorization: Bearer {env:HOOKBRIDGE_TOKEN}`, which
OpenCode fills in from the environment: the token is never written into a file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mcpapi.claude_config import ConfigError

PLUGIN_NAME = "hookbridge.js"
MARK = "// Hook Bridge's plugin, written by `hookbridge register opencode`; `unregister opencode` removes it."
# How long the plugin waits for the team: a little past the server's own limit (HOOKBRIDGE_APPROVAL_TIMEOUT, 590 s),
# after which the server has answered "no decision" itself.
WAIT_MS = 600_000

PLUGIN = """MARK
// It sends OpenCode's permission requests to the team and replies with their decision; with none, OpenCode's
// own prompt asks. A request answered at that prompt first is let go, so its card leaves the dashboards.
const URL = HOOKS_URL;
const waiting = new Map(); // permission request id -> the AbortController of its request to the team

export const HookBridge = async ({ client, directory }) => ({
  event: async ({ event }) => {
    if (event.type === "permission.replied") {
      const replied = event.properties;
      waiting.get(replied.requestID ?? replied.permissionID)?.abort();
      return;
    }
    if (event.type !== "permission.asked") return;
    const asked = event.properties;
    const body = {
      hook_event_name: "PermissionRequest",
      session_id: asked.sessionID,
      cwd: directory,
      tool_name: asked.permission,
      tool_input: { ...(asked.metadata ?? {}), patterns: asked.patterns },
      tool_use_id: asked.tool?.callID,
    };
    let decided = {};
    const leaving = new AbortController();
    waiting.set(asked.id, leaving);
    const timer = setTimeout(() => leaving.abort(), WAIT_MS);
    try {
      const response = await fetch(URL, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${process.env.HOOKBRIDGE_TOKEN ?? ""}` },
        body: JSON.stringify(body),
        signal: leaving.signal,
      });
      if (response.ok) decided = await response.json();
    } catch {
      return; // answered at OpenCode's own prompt, or the server cannot be asked: that prompt decides
    } finally {
      clearTimeout(timer);
      waiting.delete(asked.id);
    }
    if (decided.reply !== "once" && decided.reply !== "reject") return;
    await client.postSessionIdPermissionsPermissionId({
      path: { id: asked.sessionID, permissionID: asked.id },
      body: { response: decided.reply, message: decided.message },
    });
  },
});
"""


def config_dir() -> Path:
    """OpenCode's own: $XDG_CONFIG_HOME/opencode, else ~/.config/opencode."""
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "opencode"


def plugin_text(url: str) -> str:
    return (
        PLUGIN.replace("MARK", MARK, 1)
        .replace("HOOKS_URL", json.dumps(f"{url}/hooks/opencode"))
        .replace("WAIT_MS", str(WAIT_MS))
    )


def is_ours(path: Path) -> bool:
    return path.exists() and path.read_text().startswith(MARK)


def add_server(data: dict[str, Any], name: str, mcp_url: str) -> None:
    servers = data.setdefault("mcp", {})
    if not isinstance(servers, dict):
        raise ConfigError("'mcp' in opencode.json is not an object; refusing to touch it")
    servers[name] = {
        "type": "remote",
        "url": mcp_url,
        "enabled": True,
        "headers": {"Authorization": "Bearer {env:HOOKBRIDGE_TOKEN}"},
    }


def remove_server(data: dict[str, Any], name: str) -> bool:
    servers = data.get("mcp")
    if not isinstance(servers, dict) or name not in servers:
        return False
    del servers[name]
    if not servers:
        del data["mcp"]
    return True
