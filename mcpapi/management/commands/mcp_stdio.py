"""Serve the Hook Bridge tools over stdio, against the same database and channel layer as the web server.

stdout carries the MCP protocol and nothing else: every log line goes to stderr.
"""

from __future__ import annotations

import asyncio
import getpass
import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from hookbridge_site import broadcast
from mcpapi import calls, toolsets
from mcpapi.models import AgentToken, Scope, digest
from mcpapi.server import build_server


class Command(BaseCommand):
    help = "Serve the MCP tools over stdio (for clients that only speak stdio)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--toolsets", default=settings.HOOKBRIDGE_DEFAULT_TOOLSETS, help="e.g. maxsim+askme")
        parser.add_argument(
            "--token",
            default=os.environ.get("HOOKBRIDGE_TOKEN", ""),
            help="An agent token naming who asks (or HOOKBRIDGE_TOKEN); without one, your OS user asks.",
        )

    def handle(self, *args: Any, token: str, **options: Any) -> None:
        try:
            sets = toolsets.parse(options["toolsets"])
        except toolsets.UnknownToolset as exc:
            raise CommandError(str(exc)) from None
        if token:
            agent = AgentToken.authenticate(token)
            if agent is None or agent.scope != Scope.AGENT:
                raise CommandError("--token is not an active agent token")
            access = AccessToken(token=digest(token), client_id=str(agent.pk), scopes=[], claims={"name": agent.name})
            # The tools read the caller from the SDK's auth context, as over HTTP.
            auth_context_var.set(AuthenticatedUser(access))
        else:
            calls.local_asker_name.set(f"{getpass.getuser()} (stdio)")
        server = build_server(sets)

        async def serve() -> None:
            broadcast.bind_server_loop()
            await server.run_stdio_async()

        asyncio.run(serve())
