"""Create a bearer token; it is shown once, alone on the last line of the output."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcpapi.models import AgentToken


class Command(BaseCommand):
    help = "Create a bearer token for an agent or integration. The token is printed once and stored hashed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="Who is asking, e.g. 'claude-code' or 'alice-laptop'. Shown on the dashboard.")

    def handle(self, *args: Any, name: str, **options: Any) -> None:
        try:
            token, raw = AgentToken.issue(name)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Created token {token.prefix}… for '{token.name}'. It is shown once; store it now.")
        self.stdout.write(raw)
