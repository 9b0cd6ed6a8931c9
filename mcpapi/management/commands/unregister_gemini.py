"""Take out exactly what register_gemini wrote into Gemini CLI's settings.json."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from core import commands
from mcpapi import claude_config, gemini_config
from mcpapi.management.commands.register_gemini import add_common_arguments, settings_file


class Command(commands.Command):
    help = "Remove Hook Bridge's hooks and MCP server from Gemini CLI's settings.json."

    def add_arguments(self, parser: CommandParser) -> None:
        add_common_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        path = settings_file(options)
        try:
            data = claude_config.load(path)
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        removed = gemini_config.remove(data, options["name"])
        if not removed:
            raise CommandError(f"nothing of Hook Bridge's is in {path}")
        claude_config.save(path, data)
        self.stdout.write(f"Removed {', '.join(removed)} from {path}.")
