"""Take out exactly what register_copilot wrote into Copilot CLI's settings.json and mcp-config.json."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from core import commands
from mcpapi import claude_config, copilot_config
from mcpapi.management.commands.register_copilot import add_common_arguments, copilot_home


class Command(commands.Command):
    help = "Remove Hook Bridge's hooks and MCP server from GitHub Copilot CLI's settings.json and mcp-config.json."

    def add_arguments(self, parser: CommandParser) -> None:
        add_common_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        home = copilot_home(options)
        settings, mcp_file = home / "settings.json", home / "mcp-config.json"
        try:
            data, mcp = claude_config.load(settings), claude_config.load(mcp_file)
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        events = copilot_config.remove_hooks(data)
        server = copilot_config.remove_server(mcp, options["name"])
        if not events and not server:
            raise CommandError(f"nothing of Hook Bridge's is in {home}")
        # A file that held only what register wrote goes with it, as it was not there before.
        for path, kept in ((settings, data), (mcp_file, mcp)):
            if kept:
                claude_config.save(path, kept)
            elif path.exists():
                path.unlink()
        said = [f"hooks ({', '.join(events)})"] if events else []
        self.stdout.write(f"Removed {', '.join([*said, *(['the MCP server'] if server else [])])} from {home}.")
