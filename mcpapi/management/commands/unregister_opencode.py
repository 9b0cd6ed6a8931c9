"""Take out exactly what register_opencode wrote: its plugin, and its MCP server in opencode.json."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from core import commands
from mcpapi import claude_config, opencode_config
from mcpapi.management.commands.register_opencode import add_common_arguments, config_folder


class Command(commands.Command):
    help = "Remove Hook Bridge's plugin and MCP server from OpenCode's config folder."

    def add_arguments(self, parser: CommandParser) -> None:
        add_common_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        folder = config_folder(options)
        config, plugin = folder / "opencode.json", folder / "plugin" / opencode_config.PLUGIN_NAME
        try:
            data = claude_config.load(config)
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        removed = []
        if opencode_config.is_ours(plugin):
            plugin.unlink()
            removed.append("the plugin")
            if not any(plugin.parent.iterdir()):
                plugin.parent.rmdir()
        if opencode_config.remove_server(data, options["name"]):
            removed.append("the MCP server")
            if data:
                claude_config.save(config, data)
            else:
                config.unlink()
        if not removed:
            raise CommandError(f"nothing of Hook Bridge's is in {folder}")
        self.stdout.write(f"Removed {' and '.join(removed)} from {folder}.")
