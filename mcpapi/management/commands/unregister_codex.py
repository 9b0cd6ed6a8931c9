"""Take out exactly what register_codex wrote into Codex CLI's hooks.json and config.toml."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from core import commands
from mcpapi import claude_config, codex_config
from mcpapi.management.commands.register_codex import add_common_arguments, codex_home


class Command(commands.Command):
    help = "Remove Hook Bridge's hooks, their trust and its MCP server from Codex CLI's hooks.json and config.toml."

    def add_arguments(self, parser: CommandParser) -> None:
        add_common_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        home = codex_home(options)
        hooks_file, config_file = home / "hooks.json", home / "config.toml"
        try:
            data = claude_config.load(hooks_file)
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        removed = [f"hooks ({', '.join(events)})" for events in [codex_config.remove_hooks(data)] if events]
        config = config_file.read_text() if config_file.exists() else ""
        if codex_config.has_block(config):
            removed.append("the MCP server and the hooks' trust")
        if not removed:
            raise CommandError(f"nothing of Hook Bridge's is in {home}")
        # A file that held only what register wrote goes with it, as it was not there before.
        if data:
            claude_config.save(hooks_file, data)
        elif hooks_file.exists():
            hooks_file.unlink()
        if (kept := codex_config.remove_block(config)) or not config_file.exists():
            if config_file.exists():
                claude_config.write_atomically(config_file, kept)
        else:
            config_file.unlink()
        self.stdout.write(f"Removed {', '.join(removed)} from {home}.")
