"""Remove exactly the entry register_claude wrote into ~/.claude.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core import commands
from mcpapi import claude_config
from mcpapi.management.commands.register_claude import config_path, hooks_settings_path, hooks_url


class Command(commands.Command):
    help = "Remove the Hook Bridge server entry for a project from ~/.claude.json."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", default=str(Path.cwd()), help="the project folder (default: this one)")
        parser.add_argument("--name", default="hookbridge", help="the server's name in Claude Code")
        parser.add_argument("--config", default=None, help="default: ~/.claude.json")
        parser.add_argument("--hooks", action="store_true", help="remove the hooks register_claude --hooks wrote")
        parser.add_argument(
            "--scope",
            choices=["local", "project", "user"],
            default="local",
            help="with --hooks: which Claude Code settings file they were written to (default: local)",
        )
        parser.add_argument("--settings-file", default=None, help="with --hooks: that settings file, by its path")
        parser.add_argument(
            "--url",
            default=None,
            help="the server's base URL (default: the running `serve`'s, or HOOKBRIDGE_PUBLIC_URL)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["hooks"]:
            self.unregister_hooks(options)
            return
        project = str(Path(options["project"]).resolve())
        path = config_path(options)
        try:
            data = claude_config.load(path)
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        if not claude_config.remove_server(data, project, options["name"]):
            raise CommandError(f"no server '{options['name']}' is registered for {project} in {path}")
        claude_config.save(path, data)
        self.stdout.write(f"Removed '{options['name']}' for {project} from {path}. Restart Claude Code.")

    def unregister_hooks(self, options: dict[str, Any]) -> None:
        path, url = hooks_settings_path(options), hooks_url(options)
        try:
            data = claude_config.load(path)
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        removed = claude_config.remove_hooks(data, url)
        if not removed:
            raise CommandError(f"no hooks to {url} in {path}")
        claude_config.save(path, data)
        self.stdout.write(f"Removed the hooks to {url} ({', '.join(removed)}) from {path}.")
