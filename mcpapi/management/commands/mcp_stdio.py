"""Serve the Hook Bridge tools over stdio, against the same database and channel layer as the web server.

stdout carries the MCP protocol and nothing else: every log line goes to stderr.

On the embedded default the channel layer is shared with a running `serve` on the
same database (core.local_layer): an answer given on its dashboard wakes
a call waiting here at once, and a question asked here appears there at once.
"""

from __future__ import annotations

import asyncio
import getpass
import logging
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter
from mcp_types.jsonrpc import JSONRPCNotification

from core import broadcast, commands, runtime
from core.compat import mcp_sdk
from core.compat.anyio_tasks import free_cancelled_tasks
from hosts import claude_code
from hosts.base import SetupError
from mcpapi import calls, toolsets
from mcpapi import runtime as mcp_state
from mcpapi.jsonrpc import jsonrpc_problem
from mcpapi.server import access_token, build_server
from notify import dispatcher
from questions import sweeper
from tokens.models import AgentToken, Scope

logger = logging.getLogger(__name__)

# Reasons kept for cancels of calls that had already ended; the oldest go first.
MAX_NOTED_REASONS = 1000


def note_cancellation(item: object) -> None:
    """Remember why the client cancelled a request, before the SDK cancels its handler."""
    message = item.message if isinstance(item, SessionMessage) else None
    if not isinstance(message, JSONRPCNotification) or message.method != "notifications/cancelled":
        return
    params = message.params or {}
    request_id = params.get("requestId")
    if request_id is None:
        return
    reason = params.get("reason")
    mcp_state.stdio_cancel_reasons[str(request_id)] = reason if isinstance(reason, str) else ""
    while len(mcp_state.stdio_cancel_reasons) > MAX_NOTED_REASONS:
        mcp_state.stdio_cancel_reasons.pop(next(iter(mcp_state.stdio_cancel_reasons)))


class CancellationTap:
    """The stdio read stream, seen through: each message is noted on its way to the SDK."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def __aenter__(self) -> CancellationTap:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._inner.__aexit__(*exc)

    def __aiter__(self) -> CancellationTap:
        return self

    async def __anext__(self) -> Any:
        item = await self._inner.__anext__()
        note_cancellation(item)
        return item

    async def receive(self) -> Any:
        item = await self._inner.receive()
        note_cancellation(item)
        return item

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


# What decides where the data is: a server Claude Code starts from the entry must use the same.
SHARED_ENV = ("HOOKBRIDGE_DATA_DIR", "DATABASE_URL", "REDIS_URL")


def stdio_entry(sets: str, token: str) -> dict[str, Any]:
    """How Claude Code starts this same server: the command that runs now, without --register.

    Without --register, or the process Claude Code starts would remove the entry when it exits.
    """
    program = Path(sys.argv[0])
    if program.name == "manage.py":  # a checkout
        command, args = sys.executable, [str(program.resolve()), "mcp_stdio"]
    else:  # the installed `hookbridge` command
        command, args = str(Path(shutil.which(sys.argv[0]) or program).resolve()), ["stdio"]
    env = {name: os.environ[name] for name in SHARED_ENV if os.environ.get(name)}
    if token:
        env["HOOKBRIDGE_TOKEN"] = token  # not in args, where `ps` would show it
    entry: dict[str, Any] = {"type": "stdio", "command": command, "args": [*args, "--toolsets", sets]}
    if env:
        entry["env"] = env
    return entry


def claim_stdin() -> anyio.AsyncFile[str]:
    """The protocol's input, on a descriptor of its own; fd 0 then reads /dev/null, as the SDK
    arranges when it opens stdin itself, so a hook's command or a child never eats a message."""
    wire = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return anyio.wrap_file(open(wire, encoding="utf-8", errors="replace", closefd=True))


class CheckedLines:
    """stdin, line by line, with the lines the SDK would drop without a reply answered here.

    The SDK's parser refuses half a surrogate pair and very deep JSON and then says nothing, so
    the caller waits for ever; mcpapi.jsonrpc.jsonrpc_problem words the error as over HTTP.
    """

    def __init__(self, inner: anyio.AsyncFile[str], tool_names: frozenset[str] | None = None) -> None:
        self._lines: AsyncIterator[str] = aiter(inner)
        self.tool_names = tool_names
        self.replies: Any = None  # the SDK's write stream, once it is open

    def __aiter__(self) -> CheckedLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await anext(self._lines)
            problem = jsonrpc_problem(line.encode("utf-8", errors="surrogatepass"), self.tool_names)
            if problem is None or self.replies is None:
                return line
            _status, error = problem
            logger.info("Refused a stdio message: %s", error["error"]["message"])
            await self.replies.send(SessionMessage(jsonrpc_message_adapter.validate_python(error)))


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(0)


class Command(commands.Command):
    help = "Serve the MCP tools over stdio (for clients that only speak stdio)."
    # A host waits for the first answer (issue 39: 4.75 s from start to server/discover): the system checks,
    # which import every URL and view, are `serve`'s and `check`'s business, not every stdio start's.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--toolsets", default=settings.HOOKBRIDGE_DEFAULT_TOOLSETS, help="e.g. maxsim+askme")
        parser.add_argument(
            "--token",
            default=settings.HOOKBRIDGE_TOKEN,
            help="An agent token naming who asks (or HOOKBRIDGE_TOKEN); without one, your OS user asks.",
        )
        parser.add_argument(
            "--no-open",
            action="store_true",
            help="never open the browser at a question (by default it opens when no dashboard is open)",
        )
        parser.add_argument(
            "--register",
            action="store_true",
            help="register this stdio server with Claude Code for the current folder (~/.claude.json) while it runs",
        )
        parser.add_argument("--register-name", default="hookbridge", help="the server's name in Claude Code")

    def handle(self, *args: Any, token: str, **options: Any) -> None:
        runtime.tune_thread_switching()
        free_cancelled_tasks()
        try:
            sets = toolsets.parse(options["toolsets"])
        except toolsets.UnknownToolset as exc:
            raise CommandError(str(exc)) from None
        if token:
            agent = AgentToken.authenticate(token)
            if agent is None or agent.scope != Scope.AGENT:
                raise CommandError("--token is not an active agent token")
            # The tools read the caller from the SDK's auth context, as over HTTP.
            auth_context_var.set(AuthenticatedUser(access_token(agent, token)))
        else:
            calls.local_asker_name.set(f"{getpass.getuser()} (stdio)")
        mcp_state.stdio = True
        settings.HOOKBRIDGE_OPEN_BROWSER = settings.HOOKBRIDGE_STDIO_OPEN_BROWSER and not options["no_open"]
        server = build_server(sets)

        async def serve() -> None:
            broadcast.bind_server_loop(serves_web=False)
            sweeper.ensure_running()
            # With no `serve` running, a stdio agent's questions still reach Slack and e-mail.
            dispatcher.ensure_running()
            main = asyncio.current_task()
            assert main is not None
            # Hosts end a stdio server with SIGTERM: cancelling the calls (rather than dying
            # mid-wait) lets each mark its question as left, answerable until the agent is back.
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main.cancel)
            lowlevel = mcp_sdk.lowlevel(server)  # what MCPServer.run_stdio_async runs, with the tap in between
            lines = CheckedLines(claim_stdin(), frozenset(entry.name for entry in toolsets.tools(sets)))
            async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
                lines.replies = write_stream
                await lowlevel.run(CancellationTap(read_stream), write_stream, lowlevel.create_initialization_options())

        registration = None
        if options["register"]:
            # A SIGTERM after the entry is written but before the loop takes the signal over would kill the
            # process with the entry left behind: until then it ends the command through the `finally` below.
            signal.signal(signal.SIGTERM, _exit_on_sigterm)
            try:
                registration = claude_code.register_here(
                    options["register_name"], stdio_entry(options["toolsets"], token)
                )
            except SetupError as exc:
                raise CommandError(str(exc)) from None
        try:
            asyncio.run(serve())
        except asyncio.CancelledError:
            logger.info("Stopped by SIGTERM")
        finally:
            # Whichever way it ends (stdin closed, SIGTERM, Ctrl-C), the entry goes with it.
            if registration is not None:
                claude_code.unregister_quietly(registration)
