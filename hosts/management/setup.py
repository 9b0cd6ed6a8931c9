"""`register HOST` and `unregister HOST`: one command each, every host's options beside the common ones.

Each host is a sub-command (`manage.py register gemini --project .`), so `register --help` lists them all and
`register cursor --help` says what Cursor's takes. What a registration needs of the server — the address
people reach it at, an agent token — is found here and handed to the host's module (hosts/<host>.py), which
writes only files.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core import commands, presence
from hosts.base import Host, Setup, SetupError
from hosts.registry import HOSTS
from tokens.models import AgentToken, Scope


def base_url(url: str | None) -> str:
    """--url as the server's base URL; one that names an MCP endpoint (…/mcp, …/mcp/<sets>) counts as its server's."""
    said = (url or presence.public_url()).rstrip("/")
    return said[: -len("/mcp")] if said.endswith("/mcp") else said.split("/mcp/")[0]


def issue_token(given: str) -> Callable[[str, str], str]:
    """The Setup's token: --token's, else the one the host's settings hold while it is a good agent token, else new."""

    def token(label: str, known: str) -> str:
        if given:
            return given
        found = AgentToken.authenticate(known) if known else None
        if found is not None and found.scope == Scope.AGENT:
            return known
        return AgentToken.issue(label)[1]

    return token


class HostCommand(commands.Command):
    verb = "register"

    def add_arguments(self, parser: CommandParser) -> None:
        hosts = parser.add_subparsers(dest="host", metavar="HOST", required=True, title="hosts")
        for host in HOSTS.values():
            one = hosts.add_parser(host.name, help=f"{host.title}: {host.registers}", description=host.registers)
            self.add_common_arguments(one, host)
            host.add_arguments(one)

    def add_common_arguments(self, parser: argparse.ArgumentParser, host: Host) -> None:
        parser.add_argument(
            "--project",
            default=None,
            metavar="DIR",
            help="that project's settings (default: yours; Claude Code's MCP entry: the current folder's)",
        )
        parser.add_argument(
            "--url",
            default=None,
            help="the server's base URL, as the host reaches it (default: the running `serve`'s address, or "
            "HOOKBRIDGE_PUBLIC_URL)",
        )
        parser.add_argument("--name", default="hookbridge", help=f"the MCP server's name in {host.title}")
        parser.add_argument(
            "--hooks",
            action="store_true",
            help="Claude Code: its hooks instead of its MCP server (the other hosts get both always)",
        )
        if self.verb == "register":
            parser.add_argument("--token", default="", help="the agent token it sends (default: a new one)")
            parser.add_argument(
                "--approve",
                default="",
                metavar="TOOLS",
                help="tools (a regular expression on the tool's name) whose every use waits for the team "
                "(Claude Code, Gemini CLI)",
            )
            parser.add_argument(
                "--headless",
                action="store_true",
                help="for a run nobody watches (`gemini -p`, `codex exec`, `copilot -p`, …): what nobody decided is "
                "refused, not left to the host's own prompt",
            )
            parser.add_argument("--timeout", type=int, default=None, help="the hooks' timeout in seconds")

    def handle(self, *args: Any, **options: Any) -> None:
        host = HOSTS[options["host"]]
        setup = Setup(
            url=base_url(options.get("url")),
            name=options["name"],
            project=Path(options["project"]) if options.get("project") else None,
            options=options,
            token=issue_token(options.get("token") or ""),
            hooks=options["hooks"],
            approve=options.get("approve") or "",
            headless=bool(options.get("headless")),
            timeout=options.get("timeout"),
        )
        try:
            said = host.register(setup) if self.verb == "register" else host.unregister(setup)
        except SetupError as exc:
            raise CommandError(str(exc)) from None
        for line in said:
            self.stdout.write(line)


def renamed(verb: str, host_name: str) -> type[HostCommand]:
    """An old command name (`register_gemini`): it still works, with its options, and says the new one."""

    class Renamed(HostCommand):
        help = f"The old name of `{verb} {host_name}`."

        def add_arguments(self, parser: CommandParser) -> None:
            host = HOSTS[host_name]
            self.add_common_arguments(parser, host)
            host.add_arguments(parser)

        def handle(self, *args: Any, **options: Any) -> None:
            self.stderr.write(f"This command is now `{verb} {host_name}`; its old name will go in a later release.")
            super().handle(*args, **{**options, "host": host_name})

    Renamed.verb = verb
    return Renamed
