"""OpenCode: a plugin of ours POSTs its permission requests in Claude Code's words; its opencode.json.

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

import argparse
import json
import os
from pathlib import Path
from typing import Any

from hosts import settings_files
from hosts.base import NO_DECISION, Host, Setup, SetupError, allowed_as_asked, decision_of, token_line

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


def add_server(data: dict[str, Any], name: str, mcp_url: str, path: Path) -> None:
    settings_files.object_in(data, "mcp", path)[name] = {
        "type": "remote",
        "url": mcp_url,
        "enabled": True,
        "headers": {"Authorization": "Bearer {env:HOOKBRIDGE_TOKEN}"},
    }


class OpenCode(Host):
    """The plugin builds the body itself (`PermissionRequest`, the session, `tool_name` as OpenCode's permission,
    `bash`, and its metadata as `tool_input`) and replies with what it is told: `{"reply": "once" | "reject"}`;
    `{}` leaves the request to OpenCode's own prompt. An edit cannot be taken from a plugin: it is rejected,
    naming it."""

    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        if event != "PermissionRequest":
            return NO_DECISION
        decision = decision_of(answer)
        if decision is None:
            return NO_DECISION
        allowed, why = allowed_as_asked(decision)
        return {"reply": "once"} if allowed else {"reply": "reject", "message": why}

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--config-dir", default=None, help="OpenCode's config folder (default: ~/.config/opencode)")

    def register(self, setup: Setup) -> list[str]:
        self.refuse_approve(setup)
        folder = folder_of(setup)
        config, plugin = folder / "opencode.json", folder / "plugin" / PLUGIN_NAME
        if plugin.exists() and not is_ours(plugin):
            raise SetupError(f"{plugin} is not Hook Bridge's; refusing to overwrite it")
        data = settings_files.load(config)
        add_server(data, setup.name, setup.mcp_url, config)
        settings_files.write_atomically(plugin, plugin_text(setup.url))
        settings_files.save(config, data)
        return [
            f"OpenCode: the plugin {plugin}, and the MCP server '{setup.name}' in {config}.",
            token_line(self.title, setup.token("opencode (user)", "")),
        ]

    def unregister(self, setup: Setup) -> list[str]:
        folder = folder_of(setup)
        config, plugin = folder / "opencode.json", folder / "plugin" / PLUGIN_NAME
        data = settings_files.load(config)
        removed = []
        if is_ours(plugin):
            plugin.unlink()
            removed.append("the plugin")
            if not any(plugin.parent.iterdir()):
                plugin.parent.rmdir()
        if settings_files.remove_entry(data, "mcp", setup.name):
            removed.append("the MCP server")
            settings_files.save_or_remove(config, data)
        if not removed:
            raise SetupError(f"nothing of Hook Bridge's is in {folder}")
        return [f"Removed {' and '.join(removed)} from {folder}."]


# OpenCode's permission for a shell command is "bash".
OPENCODE = OpenCode(
    name="opencode",
    title="OpenCode",
    path="/hooks/opencode",
    tools={"bash": "Bash"},
    hands_over_at=frozenset(),
    runs_hook_command=False,
    registers="a plugin in its plugin folder and its MCP server in opencode.json",
)


def folder_of(setup: Setup) -> Path:
    return Path(setup.options["config_dir"]) if setup.options.get("config_dir") else config_dir()
