"""Remove exactly the entry register_claude wrote into ~/.claude.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcpapi import claude_config


class Command(BaseCommand):
    help = "Remove the Hook Bridge server entry for a project from ~/.claude.json."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", default=str(Path.cwd()))
        parser.add_argument("--name", default="hookbridge")
        parser.add_argument("--config", default=None, help="default: ~/.claude.json")

    def handle(self, *args: Any, **options: Any) -> None:
        project = str(Path(options["project"]).resolve())
        path = Path(options["config"]) if options["config"] else claude_config.default_path()
        try:
            data = claude_config.load(path)
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        if not claude_config.remove_server(data, project, options["name"]):
            raise CommandError(f"no server '{options['name']}' is registered for {project} in {path}")
        claude_config.save(path, data)
        self.stdout.write(f"Removed '{options['name']}' for {project} from {path}. Restart Claude Code.")
