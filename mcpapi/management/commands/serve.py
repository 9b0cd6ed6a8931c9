"""Start Hook Bridge for local use: pick a port, set up a login and a token, run daphne."""

from __future__ import annotations

import errno
import functools
import io
import json
import logging
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError, CommandParser
from django.core.management.commands import migrate
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor

from core import commands, presence
from hosts import claude_code
from hosts.base import SetupError
from tokens.models import AgentToken

logger = logging.getLogger(__name__)

FIRST_PORT, LAST_PORT = 8000, 8099


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        # As daphne (Twisted) binds: a port whose last connections linger in TIME_WAIT after a Ctrl-C is free
        # to it, and a port someone listens on is still refused (issue 39: `serve` said "taken" after a restart).
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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


def register_while_serving(url: str, name: str) -> claude_code.Registration:
    """MAXSIM's auto-registration: this server, at the port it took, for the project in the current folder."""
    project = str(Path.cwd().resolve())
    token = local_credentials().get("token", "")
    if not token or AgentToken.authenticate(token) is None:
        _, token = AgentToken.issue(f"claude-code ({Path(project).name})")
    entry = {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}
    try:
        return claude_code.register_here(name, entry)
    except SetupError as exc:
        raise CommandError(str(exc)) from None


def local_credentials() -> dict[str, str]:
    path = Path(settings.HOOKBRIDGE_LOCAL_CREDENTIALS)
    try:
        saved: dict[str, str] = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return saved


class Command(commands.Command):
    help = "Start the server: the first free port from 8000 up (or --port exactly), with a local login and token."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1; 0.0.0.0 for every one)"
        )
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
        parser.add_argument(
            "--access-log",
            action="store_true",
            help="print a line for every request on stdout (also with -v 2, which adds the web server's own notes)",
        )

    def handle(self, *args: Any, host: str, port: int | None, no_bootstrap: bool, **options: Any) -> None:
        chosen = choose_port(host, port)
        if options["open"]:
            settings.HOOKBRIDGE_OPEN_BROWSER = True
        url = f"http://{host}:{chosen}"
        # Messages to agents name where to answer; unless configured, that is here.
        if settings.HOOKBRIDGE_PUBLIC_URL == "http://127.0.0.1:8000":
            settings.HOOKBRIDGE_PUBLIC_URL = url
        verbose = options["verbosity"] >= 2
        # The banner is what a person needs from this window: it comes last, once the server listens,
        # so nothing scrolls it away (the access log is off and daphne's start-up notes hidden unless asked).
        banner = io.StringIO()
        if not verbose:
            logging.getLogger("daphne").setLevel(logging.WARNING)
            # The banner and nothing else at the default verbosity (issue 39): the apps' INFO lines are for -v 2,
            # or for a LOG_LEVEL set on purpose; warnings and errors still show. Before the set-up, whose own
            # notes (a secret key saved) came out between this command's lines (issue 55, point 14).
            if "LOG_LEVEL" not in os.environ:
                logging.getLogger().setLevel(logging.WARNING)
        if not no_bootstrap:
            self.prepare_database()
            call_command("bootstrap_local", url=url, stdout=banner)
        banner.write(f"Hook Bridge is listening on {url}/\n")

        registration = register_while_serving(f"{url}/mcp", options["register_name"]) if options["register"] else None
        # A stdio process on the same database opens questions at this address (core.presence).
        presence.publish(0)  # none yet: the dashboards publish their count as they open
        try:
            # Daphne stops on SIGINT and SIGTERM and returns here, so the entry is removed on either.
            run_daphne(host, chosen, access_log=options["access_log"] or verbose, ready=lambda: self.say(banner))
        finally:
            presence.withdraw()
            if registration is not None:
                claude_code.unregister_quietly(registration)

    def prepare_database(self) -> None:
        """migrate, saying how far it is: on a busy machine it is most of the start (issue 55, point 14)."""
        executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
        total = len(executor.migration_plan(executor.loader.graph.leaf_nodes()))
        if not total:
            self.stdout.write("The database is up to date.")
            return
        self.stdout.write(f"Preparing the database: {total} migrations to apply…")
        self.stdout.flush()
        started = time.monotonic()
        call_command(Migrating(self.stdout, total), interactive=False, verbosity=0)
        self.stdout.write(f"The database is ready: {total} migrations applied in {time.monotonic() - started:.1f} s.")
        self.stdout.flush()

    def say(self, banner: io.StringIO) -> None:
        self.stdout.write(banner.getvalue(), ending="")
        self.stdout.flush()


class Migrating(migrate.Command):
    """Django's migrate, telling every quarter of the way (its own progress lines are one per migration)."""

    def __init__(self, out: Any, total: int) -> None:
        super().__init__()
        self.out, self.total, self.applied = out, total, 0
        self.marks = {max(1, round(total * share)) for share in (0.25, 0.5, 0.75)} - {total}

    def migration_progress_callback(self, action: str, migration: Any = None, fake: bool = False) -> None:
        if action != "apply_success":
            return
        self.applied += 1
        if self.applied in self.marks:
            self.out.write(f"  {self.applied} of {self.total} applied…")
            self.out.flush()


def run_daphne(host: str, port: int, *, access_log: bool, ready: Callable[[], None]) -> None:
    """Daphne's own command line, told to call `ready` once its reactor runs (its sockets listen by then)."""
    from daphne.cli import CommandLineInterface
    from daphne.server import Server
    from twisted.internet import reactor

    from core.endpoints import endpoint

    cli = CommandLineInterface()
    cli.server_class = functools.partial(Server, ready_callable=lambda: reactor.callWhenRunning(ready))
    arguments = ["-e", endpoint(host, port), "hookbridge_site.asgi:application"]
    arguments[:0] = ["--access-log", "-"] if access_log else ["-v", "0"]
    cli.run(arguments)
