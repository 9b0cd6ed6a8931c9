"""Start Hook Bridge for local use: pick a port, set up a login and a token, run daphne."""

from __future__ import annotations

import errno
import json
import logging
import socket
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core import presence
from mcpapi import claude_config
from tokens.models import AgentToken

logger = logging.getLogger(__name__)

FIRST_PORT, LAST_PORT = 8000, 8099


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def choose_port(host: str, port: int | None) -> int:
    if port is not None:
        if not port_is_free(host, port):
            raise CommandError(f"port {port} is already taken on {host}; pick another with --port, or leave --port out")
        return port
    for candidate in range(FIRST_PORT, LAST_PORT + 1):
        if port_is_free(host, candidate):
            return candidate
    raise CommandError(f"no free port between {FIRST_PORT} and {LAST_PORT} on {host}; pass one with --port")


def register_while_serving(url: str, name: str) -> claude_config.Registration:
    """MAXSIM's auto-registration: this server, at the port it took, for the project in the current folder."""
    project = str(Path.cwd().resolve())
    token = local_credentials().get("token", "")
    if not token or AgentToken.authenticate(token) is None:
        _, token = AgentToken.issue(f"claude-code ({Path(project).name})")
    entry = {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}
    try:
        return claude_config.register_here(name, entry)
    except claude_config.ConfigError as exc:
        raise CommandError(str(exc)) from None


def local_credentials() -> dict[str, str]:
    path = Path(settings.HOOKBRIDGE_LOCAL_CREDENTIALS)
    try:
        saved: dict[str, str] = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return saved


class Command(BaseCommand):
    help = "Start the server: the first free port from 8000 up (or --port exactly), with a local login and token."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=None, help="exactly this port (an error if it is taken)")
        parser.add_argument("--no-bootstrap", action="store_true", help="skip migrate and the local login/token")
        parser.add_argument(
            "--open", action="store_true", help="open the dashboard when a question arrives and none is open"
        )
        parser.add_argument(
            "--register",
            action="store_true",
            help="register this server with Claude Code for the current folder (~/.claude.json) while it runs",
        )
        parser.add_argument("--register-name", default="hookbridge", help="the server's name in Claude Code")

    def handle(self, *args: Any, host: str, port: int | None, no_bootstrap: bool, **options: Any) -> None:
        chosen = choose_port(host, port)
        if options["open"]:
            settings.HOOKBRIDGE_OPEN_BROWSER = True
        url = f"http://{host}:{chosen}"
        # Messages to agents name where to answer; unless configured, that is here.
        if settings.HOOKBRIDGE_PUBLIC_URL == "http://127.0.0.1:8000":
            settings.HOOKBRIDGE_PUBLIC_URL = url
        if not no_bootstrap:
            call_command("migrate", interactive=False, verbosity=0)
            call_command("bootstrap_local", url=url, stdout=self.stdout)
        self.stdout.write(f"Hook Bridge is listening on {url}/", ending="\n")
        self.stdout.flush()
        from daphne.cli import CommandLineInterface

        from core.endpoints import endpoint

        registration = register_while_serving(f"{url}/mcp", options["register_name"]) if options["register"] else None
        # A stdio process on the same database opens questions at this address (core.presence).
        presence.publish(0)  # none yet: the dashboards publish their count as they open
        try:
            # Daphne stops on SIGINT and SIGTERM and returns here, so the entry is removed on either.
            CommandLineInterface().run(["-e", endpoint(host, chosen), "hookbridge_site.asgi:application"])
        finally:
            presence.withdraw()
            if registration is not None:
                claude_config.unregister_quietly(registration)
