"""Register this Hook Bridge server with OpenCode: its plugin (team approvals for OpenCode's permission requests)
in the plugin folder, and its MCP server (ask_question and the rest) in opencode.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core import commands
from mcpapi import claude_config, opencode_config
from mcpapi.management.commands.register_claude import base_url
from tokens.models import AgentToken


class Command(commands.Command):
    help = "Write Hook Bridge's plugin and MCP server into OpenCode's config folder."

    def add_arguments(self, parser: CommandParser) -> None:
        add_common_arguments(parser)
        parser.add_argument("--token", default="", help="the agent token to tell you to export (default: a new one)")

    def handle(self, *args: Any, **options: Any) -> None:
        folder = config_folder(options)
        config, plugin = folder / "opencode.json", folder / "plugin" / opencode_config.PLUGIN_NAME
        url = base_url(options)
        if plugin.exists() and not opencode_config.is_ours(plugin):
            raise CommandError(f"{plugin} is not Hook Bridge's; refusing to overwrite it")
        try:
            data = claude_config.load(config)
            opencode_config.add_server(data, options["name"], f"{url}/mcp")
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        plugin.parent.mkdir(parents=True, exist_ok=True)
        claude_config.write_atomically(plugin, opencode_config.plugin_text(url))
        claude_config.save(config, data)
        self.stdout.write(f"OpenCode: the plugin {plugin}, and the MCP server '{options['name']}' in {config}.")
        token = options["token"] or AgentToken.issue("opencode (user)")[1]
        self.stdout.write(f"Before starting OpenCode, set the token it sends:\n  export HOOKBRIDGE_TOKEN={token}")


def add_common_arguments(parser: CommandParser) -> None:
    parser.add_argument("--config-dir", default=None, help="OpenCode's config folder (default: ~/.config/opencode)")
    parser.add_argument("--name", default="hookbridge", help="the MCP server's name in OpenCode")
    parser.add_argument(
        "--url",
        default=None,
        help="the server's base URL (default: the running `serve`'s address, or HOOKBRIDGE_PUBLIC_URL)",
    )


def config_folder(options: dict[str, Any]) -> Path:
    return Path(options["config_dir"]) if options["config_dir"] else opencode_config.config_dir()
