"""The /mcp mounts: the SDK's Starlette apps, run inside daphne, one per combination of tool sets.

Daphne does not speak the ASGI lifespan protocol, so the SDK's session manager
never gets its `run()` context from Starlette. We hold that context open in one
long-lived task, started by the first /mcp request and stopped from a Twisted
"before shutdown" trigger (without the stop, SIGTERM waits forever on it).

Everything on the way in passes through here first, which is also where the
handshake era's `notifications/cancelled` is routed: in stateless mode the SDK
hands that POST to a fresh transport that knows nothing of the call, maybe on
another worker, so we deliver it ourselves through the channel layer, keyed by
the client connection (see mcpapi.calls: the signed Mcp-Session-Id issued here
at `initialize`, verified and stripped on every later request).

A blocking call's SSE response starts at once: daphne holds the headers back
until the first body bytes, and a client that sees no response start cannot tell
a slow person from a dead server.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import sys
import uuid
from collections.abc import Awaitable, Callable, Collection
from typing import Any, cast

from channels.layers import get_channel_layer
from django.conf import settings
from django.db import DatabaseError
from mcp_types import PROTOCOL_VERSION_META_KEY
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS
from starlette.types import Message, Receive, Scope, Send

from core import jsonapi, runtime
from core.asgi_io import header, read_body, send_json
from core.db import database_sync_to_async
from mcpapi import calls, toolsets
from questions.models import Question
from tokens import cache as token_cache
from tokens.auth import parse_bearer
from tokens.models import AgentToken
from tokens.models import Scope as TokenScope

logger = logging.getLogger(__name__)

ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class MCPMount:
    """One SDK app, with its session manager kept running in a task of its own."""

    def __init__(self, build: Callable[[], tuple[ASGIApp, Any]]) -> None:
        self._build = build
        self._app: ASGIApp | None = None
        self._session_manager: Any = None
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None

    async def _ensure_running(self) -> ASGIApp:
        if self._ready is None:
            # First request: everything up to create_task runs without an
            # await, so concurrent first requests cannot start two runners.
            self._ready, self._stop = asyncio.Event(), asyncio.Event()
            self._app, self._session_manager = self._build()
            self._runner = asyncio.get_running_loop().create_task(self._run(), name="mcp-session-manager")
        await self._ready.wait()
        assert self._app is not None
        return self._app

    async def _run(self) -> None:
        assert self._ready is not None
        assert self._stop is not None
        try:
            async with self._session_manager.run():
                self._ready.set()
                await self._stop.wait()
        except Exception:
            logger.exception("The MCP session manager stopped with an error")
            raise
        finally:
            self._ready.set()
            logger.info("MCP session manager stopped")

    async def shutdown(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._runner is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._runner), timeout=5)
            except (TimeoutError, asyncio.CancelledError):
                self._runner.cancel()
            except Exception:
                logger.debug("runner ended with an error during shutdown", exc_info=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = await self._ensure_running()
        await app(scope, receive, send)


class MCPRouter:
    """Routes /mcp and /mcp/<set>+<set> to the mount serving exactly those tool sets.

    Also the one place every /mcp POST passes first: it caps the body and routes
    the handshake era's cancellations (see the module docstring).
    """

    def __init__(self, build: Callable[[tuple[str, ...]], tuple[ASGIApp, Any]]) -> None:
        self._build = build
        self._mounts: dict[tuple[str, ...], MCPMount] = {}
        self._names: dict[tuple[str, ...], frozenset[str]] = {}
        self._trigger_installed = False

    def _tool_names(self, sets: tuple[str, ...]) -> frozenset[str]:
        # Fixed for the life of the process (the hooks set discovers its plugins once).
        if sets not in self._names:
            self._names[sets] = frozenset(entry.name for entry in toolsets.tools(sets))
        return self._names[sets]

    def _mount(self, sets: tuple[str, ...]) -> MCPMount:
        if sets not in self._mounts:
            self._mounts[sets] = MCPMount(lambda: self._build(sets))
            self._install_shutdown_trigger()
        return self._mounts[sets]

    async def shutdown(self, waited_on: list[uuid.UUID] | None = None) -> None:
        """Stop every session manager; in-flight tool calls end, their questions left pending for the re-ask.

        The questions waited on here, and those being written by calls not yet waiting,
        are marked as left in one UPDATE rather than by each call on its way out: 2,000
        held calls would be 2,000 transactions, and not every call is cancelled on the
        way down (daphne cuts the 2026-07-28 era's, and nobody awaits their handlers).
        """
        if waited_on is None:
            waited_on = self._stopping()
        try:
            await self._mark_left(waited_on)
        except Exception:
            # Twisted would swallow it: said here, and the session managers still stop.
            logger.exception("Could not mark the questions waited on here as left on the way down")
        await asyncio.gather(*(mount.shutdown() for mount in self._mounts.values()))

    def start_shutdown(self, waited_on: list[uuid.UUID]) -> asyncio.Task[None]:
        """`shutdown` as a task in a context of its own.

        Twisted runs the shutdown trigger in whatever context fired it, such as the done-callback
        of a request task cancelled while it awaited sync_to_async. In a context copied from there
        asgiref refuses every database hop ("Single thread executor already being used, would
        deadlock"), and the questions were never marked as left (seen in a CI run).
        """
        return asyncio.get_running_loop().create_task(self.shutdown(waited_on), context=contextvars.Context())

    @staticmethod
    async def _mark_left(waited_on: list[uuid.UUID]) -> None:
        writes = list(runtime.asks_in_flight)
        if writes:
            await asyncio.wait(writes, timeout=3)
            written = [w.result()[0].pk for w in writes if w.done() and not w.cancelled() and not w.exception()]
            runtime.marked_on_shutdown.update(written)
            waited_on = [*waited_on, *written]
        if waited_on:
            marked = await database_sync_to_async(Question.agents_stopped_waiting)(waited_on, "the server restarted")
            logger.info("Marked %d questions as left for the re-ask: the server is stopping", marked)

    @staticmethod
    def _stopping() -> list[uuid.UUID]:
        """From now on calls are ending for the shutdown; the questions waited on at this moment."""
        runtime.shutting_down.set()
        waited_on = list(runtime.waiting_on)
        runtime.marked_on_shutdown.update(waited_on)
        return waited_on

    def _install_shutdown_trigger(self) -> None:
        # Only under daphne: importing the reactor anywhere else would install one.
        if self._trigger_installed or "twisted.internet.reactor" not in sys.modules:
            return
        from twisted.internet import defer
        from twisted.internet import reactor as _reactor

        reactor = cast(Any, _reactor)

        def before_shutdown() -> defer.Deferred[None]:
            # Now, not in the coroutine: daphne's own trigger has just cancelled every request,
            # and the cancelled calls must see the flag and still be counted when they run.
            return defer.Deferred.fromFuture(self.start_shutdown(self._stopping()))

        reactor.addSystemEventTrigger("before", "shutdown", before_shutdown)
        self._trigger_installed = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"].rstrip("/")
        spec = path[len("/mcp/") :] if path.startswith("/mcp/") else settings.HOOKBRIDGE_DEFAULT_TOOLSETS
        try:
            sets = toolsets.parse(spec)
        except toolsets.UnknownToolset as exc:
            await send_json(send, 404, {"error": str(exc), "knownToolsets": list(toolsets.TOOLSETS)})
            return
        raw = parse_bearer(header(scope, b"authorization"))
        token = None
        if raw:
            try:
                token = await token_cache.authenticate(raw)
            except DatabaseError:
                logger.exception("The database is unreachable")
                message = "Hook Bridge cannot reach its database right now; try again shortly."
                await send_json(send, 503, _jsonrpc_error(-32603, message))
                return
            if token is not None and token.scope != TokenScope.AGENT:
                message = f"Token '{token.name}' has scope '{token.scope}'; MCP tools need a token with scope 'agent'."
                await send_json(send, 403, _jsonrpc_error(-32600, message))
                return
            # The SDK's token verifier reuses this look-up instead of repeating it.
            calls.verified_token.set((raw, token))
        new_session_id: str | None = None
        handshake_session = False  # a connection that began with initialize: only the handshake's versions
        if token is not None:
            if scope["method"] in ("GET", "DELETE"):
                # Stateless: there is no stream to offer and no session to end (the spec's 405).
                await send_json(send, 405, _jsonrpc_error(-32600, "Only POST is served here"), allow=b"POST")
                return
            session_id = header(scope, b"mcp-session-id")
            handshake_session = bool(session_id)
            if session_id:
                connection = calls.connection_of(session_id, token.pk)
                if connection is None:
                    message = "Unknown Mcp-Session-Id for this token; send initialize again for a new session."
                    await send_json(send, 404, _jsonrpc_error(-32600, message))
                    return
                calls.connection.set(connection)
                # The stateless SDK keeps no sessions: it never sees the id.
                scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k != b"mcp-session-id"]}
        # The SDK's own routing of the eras: a protocol version outside the handshake's is the new era.
        version = header(scope, b"mcp-protocol-version")
        calls.cancellable_by_notification.set(not version or version in HANDSHAKE_PROTOCOL_VERSIONS)
        if scope["type"] == "http" and scope["method"] == "POST":
            content_type = header(scope, b"content-type")
            if content_type.split(";")[0].strip().lower() != "application/json":
                said = f"Content-Type: must be application/json, not {content_type[:60] or 'missing'}"
                await send_json(send, 415, _jsonrpc_error(-32600, said))
                return
            body = await read_body(receive, settings.HOOKBRIDGE_MAX_BODY_BYTES)
            if body is None:
                await send_json(send, 413, _jsonrpc_error(-32600, "Request body too large"))
                return
            messages, problem = checked_messages(body, self._tool_names(sets))
            if problem is None and version and version not in SUPPORTED_PROTOCOL_VERSIONS:
                problem = _unsupported_version(version, messages, handshake_session=handshake_session)
            if problem is not None:
                await send_json(send, *problem)
                return
            if token is not None:
                await _route_cancellation(token, messages)
                if _is_initialize(messages):
                    new_session_id = calls.issue_session_id(token.pk)
            receive = _replay(body, receive)
        # Every mount's app serves its endpoint at /mcp.
        scope = {**scope, "path": "/mcp", "raw_path": b"/mcp"}
        deliveries: list[uuid.UUID] = []
        calls.pending_deliveries.set(deliveries)
        cancelled = asyncio.Event()
        calls.cancelled_by_client.set(cancelled)
        finished = False

        async def send_and_note_the_end(message: Message) -> None:
            nonlocal finished
            if cancelled.is_set() and message["type"] == "http.response.body" and _carries_a_response(message):
                # The handshake era's rule: a request its client cancelled is not answered. The SDK
                # cannot know (the cancel came on a POST of its own), so its answer is left out here.
                message = {**message, "body": b""}
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if new_session_id is not None and message.get("status") == 200:
                    headers.append((b"mcp-session-id", new_session_id.encode()))
                    message = {**message, "headers": headers}
                await send(message)
                if any(k.lower() == b"content-type" and v.startswith(b"text/event-stream") for k, v in headers):
                    # Empty bytes make daphne write the headers now instead of with the first event.
                    await send({"type": "http.response.body", "body": b"", "more_body": True})
                return
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                finished = True

        await self._mount(sets)(scope, receive, send_and_note_the_end)
        if deliveries:
            await _mark_delivered(deliveries, finished)


async def _mark_delivered(question_ids: list[uuid.UUID], finished: bool) -> None:
    if not finished:
        logger.info("Answers %s were not delivered: the client went away; a re-ask gets them", question_ids)
        return
    try:
        await database_sync_to_async(Question.mark_all_delivered)(question_ids)
    except DatabaseError:
        # Undelivered is the safe side: a re-ask gets the same answer again.
        logger.warning("Could not mark answers %s delivered", question_ids, exc_info=True)


def _carries_a_response(message: Message) -> bool:
    """Whether an SSE body chunk holds a JSON-RPC response (the stream's one answer), not a notification."""
    for line in bytes(message.get("body", b"")).splitlines():
        if line.startswith(b"data:"):
            try:
                event = json.loads(line[5:])
            except ValueError:
                continue
            if isinstance(event, dict) and "method" not in event and ("result" in event or "error" in event):
                return True
    return False


def _unsupported_version(
    version: str, messages: list[Any], *, handshake_session: bool
) -> tuple[int, dict[str, Any]] | None:
    """The 400 for an MCP-Protocol-Version this server does not speak, in the words of the caller's era.

    The SDK sends every version outside the handshake's to the 2026-07-28 entry, whose first
    check is its envelope: a handshake-era client that sent a version of its own was told about
    envelope keys it never heard of. A connection that began with initialize, or a message with
    no envelope, is that era's, and is told which versions it may send. A message with the
    envelope goes on to the SDK, whose rejection lists the 2026 versions in that era's shape.
    """
    enveloped = any(
        isinstance(message, dict)
        and isinstance(message.get("params"), dict)
        and isinstance(message["params"].get("_meta"), dict)
        and PROTOCOL_VERSION_META_KEY in message["params"]["_meta"]
        for message in messages
    )
    if enveloped and not handshake_session:
        return None
    supported = list(HANDSHAKE_PROTOCOL_VERSIONS)
    said = f"MCP-Protocol-Version: {version[:40]!r} is not supported; send one of {', '.join(supported)}"
    error = _jsonrpc_error(-32600, said)
    error["error"]["data"] = {"supported": supported, "requested": version[:40]}
    return 400, error


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        # After the body, the next message is the client going away.
        return await receive()

    return replay


def jsonrpc_problem(body: bytes, tool_names: Collection[str] | None = None) -> tuple[int, dict[str, Any]] | None:
    """(HTTP status, JSON-RPC error) for a body the SDK must not see; None lets it go on."""
    return checked_messages(body, tool_names)[1]


def checked_messages(
    body: bytes, tool_names: Collection[str] | None = None
) -> tuple[list[Any], tuple[int, dict[str, Any]] | None]:
    """The messages of a body, parsed once, and the (HTTP status, JSON-RPC error) to answer instead
    of handing the body to the SDK, if any.

    JSON that would crash a parser; a batch (the SDK answered with a dump of its validator's
    internals); a request id that is neither a string nor an integer (the SDK would drop the
    request without a word); a tools/call whose name or arguments are not what the SDK can read,
    or names a tool this endpoint lacks (`tool_names`; the SDK made that a tool result, not the
    protocol error the specification names); text no database holds, which the SDK's parser
    refuses without naming the argument (half a surrogate pair, NaN). A NUL goes on: the server's
    call_tool refuses it as a tool error, which a model reads and corrects.
    """
    if not body.lstrip().startswith((b"{", b"[")):
        return [], None  # not JSON at all: the SDK's own parse error says so
    constants: list[str] = []
    try:
        payload = jsonapi.loads(body, constants=constants)
    except jsonapi.BadJSON as exc:
        return [], (400, _jsonrpc_error(-32700, f"Parse error: the body {exc}"))
    if isinstance(payload, list):
        batch = "Invalid Request: a batch (a JSON array of messages) is not served; send one JSON-RPC message a request"
        return [], (400, _jsonrpc_error(-32600, batch))
    messages = [payload]
    for message in messages:
        if isinstance(message, dict) and "method" in message and "id" in message:
            request_id = message["id"]
            if isinstance(request_id, bool) or not isinstance(request_id, str | int):
                shown = json.dumps(request_id)[:40]
                said = f"Invalid Request: id must be a string or an integer, not {shown}"
                return messages, (400, _jsonrpc_error(-32600, said))
    for message in messages:
        is_call = isinstance(message, dict) and message.get("method") == "tools/call" and "id" in message
        if is_call and (wrong := _tool_call_problem(message.get("params"), tool_names)) is not None:
            error = {"code": -32602, "message": wrong}
            return messages, (200, {"jsonrpc": "2.0", "id": message["id"], "error": error})
    for message in messages:
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and (problem := jsonapi.unstorable(params, nul=False)):
            error = {"code": -32602, "message": f"Invalid params: {problem}"}
            return messages, (200, {"jsonrpc": "2.0", "id": message.get("id"), "error": error})
    if constants:  # outside any params: nothing to name
        said = f"Parse error: {constants[0]} is not a JSON number; send a finite number or null"
        return messages, (400, _jsonrpc_error(-32700, said))
    return messages, None


def _tool_call_problem(params: Any, tool_names: Collection[str] | None) -> str | None:
    """What is wrong with a tools/call's params, naming the field; None when the SDK may have it."""
    if not isinstance(params, dict):
        return "Invalid params: params must be an object with the tool's name and its arguments"
    name = params.get("name")
    if not isinstance(name, str):
        return f"Invalid params: name must be a string naming the tool to call, not {json.dumps(name)[:40]}"
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        kind = {str: "a string", list: "an array", bool: "a boolean"}.get(type(arguments), "a number")
        return f"Invalid params: arguments must be an object of the tool's arguments by name, not {kind}"
    if tool_names is not None and name not in tool_names:
        return f"Unknown tool: {name[:100]!r}; tools here: {', '.join(sorted(tool_names))}"
    return None


def _is_initialize(messages: list[Any]) -> bool:
    return any(
        isinstance(message, dict) and message.get("method") == "initialize" and "id" in message for message in messages
    )


def cancellations(messages: list[Any]) -> list[tuple[str, str]]:
    """(request id, reason) of each notifications/cancelled among a POST's messages; reason "" when none was given."""
    found = []
    for message in messages:
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict) and params.get("requestId") is not None:
                reason = params.get("reason")
                found.append((str(params["requestId"]), reason if isinstance(reason, str) else ""))
    return found


async def _route_cancellation(token: AgentToken, messages: list[Any]) -> None:
    found = cancellations(messages)
    if not found:
        return
    layer = get_channel_layer()
    for request_id, reason in found:
        logger.info("Routing cancellation of request %s for token %s: %r", request_id, token.name, reason)
        message = {"type": "call.cancel", "reason": reason[:300]}
        await layer.group_send(calls.call_group(token.pk, request_id), message)


def _jsonrpc_error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
