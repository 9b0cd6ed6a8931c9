"""Register this Hook Bridge server with Claude Code for a project (in ~/.claude.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcpapi import claude_config
from tokens.models import AgentToken


class Command(BaseCommand):
    help = "Write the Hook Bridge server entry into ~/.claude.json for a project (or --print it instead)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", default=str(Path.cwd()), help="the project folder (default: here)")
        parser.add_argument("--name", default="hookbridge", help="the server's name in Claude Code")
        parser.add_argument("--url", default=f"{settings.HOOKBRIDGE_PUBLIC_URL}/mcp")
        parser.add_argument("--token", default="", help="an existing agent token (default: create one)")
        parser.add_argument("--config", default=None, help="the file to write (default: ~/.claude.json)")
        parser.add_argument("--print", action="store_true", help="print the .mcp.json entry and claude mcp add line")

    def handle(self, *args: Any, **options: Any) -> None:
        project = str(Path(options["project"]).resolve())
        token = options["token"]
        if not token:
            _, token = AgentToken.issue(f"claude-code ({Path(project).name})")
        entry = {"type": "http", "url": options["url"], "headers": {"Authorization": f"Bearer {token}"}}
        if options["print"]:
            self.stdout.write(json.dumps({"mcpServers": {options["name"]: entry}}, indent=2))
            self.stdout.write(
                f"claude mcp add --transport http {options['name']} {options['url']} "
                f'--header "Authorization: Bearer {token}"'
            )
            return
        path = Path(options["config"]) if options["config"] else claude_config.default_path()
        try:
            data = claude_config.load(path)
            claude_config.add_server(data, project, options["name"], entry)
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        claude_config.save(path, data)
        self.stdout.write(f"Registered '{options['name']}' ({options['url']}) for {project} in {path}.")
        self.stdout.write("Restart Claude Code to pick up the change.")
