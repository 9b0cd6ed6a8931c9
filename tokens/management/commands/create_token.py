"""Create a bearer token; it is shown once, alone on the last line of the output."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from core import commands, presence
from projects.management.commands.project import project_named
from tokens.models import AgentToken, Scope


def where_of(token: AgentToken) -> str:
    return f"project '{token.project.name}'" if token.project else "every project"


class Command(commands.Command):
    help = "Create a bearer token for an agent or integration. The token is printed once and stored hashed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="Who is asking, e.g. 'claude-code' or 'alice-laptop'. Shown on the dashboard.")
        parser.add_argument(
            "--scope",
            choices=Scope.values,
            default=Scope.AGENT,
            help="agent: calls the MCP tools (default); answer: answers questions through the JSON API.",
        )
        where = parser.add_mutually_exclusive_group()
        where.add_argument(
            "--project", default=None, help="The project its work belongs to (default: the default project)."
        )
        where.add_argument(
            "--all-projects",
            action="store_true",
            help="Every project: a bot for the whole team (an answering bot, say).",
        )
        parser.add_argument("--expires-in-days", type=int, default=None, help="Refuse the token after this many days.")
        parser.add_argument(
            "--background",
            action="store_true",
            help="With HOOKBRIDGE_TASKS=allowed: its agent's questions may go to the background as MCP tasks.",
        )

    def handle(
        self,
        *args: Any,
        name: str,
        scope: str,
        expires_in_days: int | None,
        project: str | None,
        all_projects: bool,
        background: bool,
        **options: Any,
    ) -> None:
        if expires_in_days is not None and expires_in_days < 1:
            raise CommandError("--expires-in-days must be at least 1")
        expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
        try:
            bound = project_named(project) if project else None
            token, raw = AgentToken.issue(
                name,
                scope=scope,
                expires_at=expires_at,
                project=bound,
                all_projects=all_projects,
                may_ask_in_background=background,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        until = f", expires {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else ""
        self.stdout.write(
            f"Created {scope} token {token.prefix}… for '{token.name}' in {where_of(token)}{until}."
            " It is shown once; store it now."
        )
        self.stdout.write(raw)
        if scope == Scope.AGENT:
            # Beside the token, not after it on stdout: the token stays alone on the last line for scripts.
            url = presence.public_url()
            self.stderr.write(
                "Connect Claude Code with it:\n"
                f'  claude mcp add --transport http hookbridge {url}/mcp --header "Authorization: Bearer {raw}"'
            )
