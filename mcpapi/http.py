"""The /mcp router: every request to the MCP endpoints passes here before the SDK's app.

In order (`MCPRouter.__call__`): the tool sets named by the path; the bearer token, looked
up once; the handshake era's signed Mcp-Session-Id (mcpapi.calls); the body's JSON-RPC checks
(mcpapi.jsonrpc); the handshake era's `notifications/cancelled`, routed to the call it names;
then the mount serving those tool sets (mcpapi.mounts), its response watched (`ResponseWatch`).

Cancellations are routed here because in stateless mode the SDK hands that POST to a fresh
transport that knows nothing of the call, maybe on another worker, so we deliver it ourselves
through the channel layer, keyed by the client connection.

A blocking call's SSE response starts at once: daphne holds the headers back until the first
body bytes, and a client that sees no response start cannot tell a slow person from a dead server.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import math
import uuid
from collections.abc import Callable
from typing import Any

from channels.layers import get_channel_layer
from django.conf import settings
from django.db import DatabaseError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS
from starlette.types import Message, Receive, Scope, Send

from core.asgi_io import header, read_body, send_json
from core.db import database_sync_to_async
from core.errors import Refused
from mcpapi import calls, jsonrpc, toolsets
from mcpapi.mounts import ASGIApp, MCPMount, install_shutdown_trigger
from questions import asking
from questions.models import Question
from tokens import cache as token_cache
from tokens import oauth
from tokens.auth import over_rate, parse_bearer, refuse_slowly
from tokens.models import TOKEN_PREFIX, AgentToken
from tokens.models import Scope as TokenScope

logger = logging.getLogger(__name__)


def rpc_refused(status: int, code: int, message: str, **headers: str) -> Refused:
    """A request answered here, not by the SDK: the HTTP status, with a JSON-RPC error saying why."""
    return Refused(message, status, body=jsonrpc.error_body(code, message), **headers)


class MCPRouter:
    """Routes /mcp and /mcp/<set>+<set> to the mount serving exactly those tool sets."""

    def __init__(self, build: Callable[[tuple[str, ...]], tuple[ASGIApp, Any]]) -> None:
        self._build = build
        self._mounts: dict[tuple[str, ...], MCPMount] = {}
        self._names: dict[tuple[str, ...], frozenset[str]] = {}
        self._trigger_installed = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            sets = _sets(scope)
            token = await _authenticate(scope)
            scope, handshake_session = _connection(scope, token)
            version = header(scope, b"mcp-protocol-version")
            # The SDK's own routing of the eras: a protocol version outside the handshake's is the new era.
            calls.cancellable_by_notification.set(not version or version in HANDSHAKE_PROTOCOL_VERSIONS)
            new_session_id = None
            if scope["type"] == "http" and scope["method"] == "POST":
                receive, new_session_id = await self._post(scope, receive, sets, token, version, handshake_session)
        except Refused as refused:
            await send_json(send, refused.status, refused.body, **refused.header_bytes())
            return
        # Every mount's app serves its endpoint at /mcp.
        scope = {**scope, "path": "/mcp", "raw_path": b"/mcp"}
        watch = ResponseWatch(send, new_session_id)
        await self._mount(sets)(scope, receive, watch)
        if watch.deliveries:
            await _mark_delivered(watch.deliveries, watch.finished)

    async def _post(
        self,
        scope: Scope,
        receive: Receive,
        sets: tuple[str, ...],
        token: AgentToken,
        version: str,
        handshake_session: bool,
    ) -> tuple[Receive, str | None]:
        """A POST's checks and routing before the SDK reads it: its body replayed, a new session's id.

        A method of its own so that the parsed messages go once it returns: a held call waits for minutes, and
        kept them (a parse of the body beside the SDK's own) for all of it.
        """
        body, messages = await self._checked_post(scope, receive, sets, version, handshake_session)
        await _refuse_asks_over_allowance(token, messages, sets)
        await _route_cancellations(token, messages)
        new_session_id = calls.issue_session_id(token.pk) if jsonrpc.is_initialize(messages) else None
        return _replay(body, receive), new_session_id

    async def _checked_post(
        self, scope: Scope, receive: Receive, sets: tuple[str, ...], version: str, handshake_session: bool
    ) -> tuple[bytes, list[Any]]:
        """The body and its messages, once they passed every check the SDK must not be left to make."""
        content_type = header(scope, b"content-type")
        if content_type.split(";")[0].strip().lower() != "application/json":
            said = f"Content-Type: must be application/json, not {content_type[:60] or 'missing'}"
            raise rpc_refused(415, -32600, said)
        body = await read_body(receive, settings.HOOKBRIDGE_MAX_BODY_BYTES)
        if body is None:
            raise rpc_refused(413, -32600, "Request body too large")
        messages, problem = jsonrpc.checked_messages(body, self._tool_names(sets))
        if problem is None and version and version not in SUPPORTED_PROTOCOL_VERSIONS:
            problem = jsonrpc.unsupported_version(version, messages, handshake_session=handshake_session)
        if problem is not None:
            status, refusal = problem
            raise Refused(str(refusal.get("error", {}).get("message", "")), status, body=refusal)
        return body, messages

    def _tool_names(self, sets: tuple[str, ...]) -> frozenset[str]:
        # Fixed for the life of the process (the hooks set discovers its plugins once).
        if sets not in self._names:
            self._names[sets] = frozenset(entry.name for entry in toolsets.tools(sets))
        return self._names[sets]

    def _mount(self, sets: tuple[str, ...]) -> MCPMount:
        if sets not in self._mounts:
            self._mounts[sets] = MCPMount(lambda: self._build(sets))
            if not self._trigger_installed:
                # Now, not in the coroutine: daphne's own trigger has just cancelled every request,
                # and the cancelled calls must see the flag and still be counted when they run.
                self._trigger_installed = install_shutdown_trigger(lambda: self.start_shutdown(asking.stopping()))
        return self._mounts[sets]

    async def shutdown(self, waited_on: list[uuid.UUID] | None = None) -> None:
        """Stop every session manager; in-flight tool calls end, their questions left pending for the re-ask.

        The questions waited on here, and those being written by calls not yet waiting,
        are marked as left in one UPDATE rather than by each call on its way out
        (questions.asking.mark_left_on_the_way_down).
        """
        if waited_on is None:
            waited_on = asking.stopping()
        try:
            await asking.mark_left_on_the_way_down(waited_on)
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


def _sets(scope: Scope) -> tuple[str, ...]:
    path = scope["path"].rstrip("/")
    spec = path[len("/mcp/") :] if path.startswith("/mcp/") else settings.HOOKBRIDGE_DEFAULT_TOOLSETS
    try:
        return toolsets.parse(spec)
    except toolsets.UnknownToolset as exc:
        raise Refused(str(exc), 404, body={"error": str(exc), "knownToolsets": list(toolsets.TOOLSETS)}) from None


def _base(scope: Scope) -> str:
    """This server's address as the client reached it: what its resource indicator and metadata start with."""
    return oauth.base_url(*oauth.scheme_and_host(scope.get("scheme", "http"), scope["headers"]))


def _unauthenticated(scope: Scope, description: str, error: str = "") -> Refused:
    """401 with where to sign in (RFC 9728): the metadata of the very endpoint the client called."""
    challenge = oauth.challenge(_base(scope), scope["path"].rstrip("/"), error=error)
    # The body says what the header says: an error code only when the header names one (RFC 6750 §3.1: a
    # request without credentials gets none).
    body = {"error": error, "error_description": description} if error else {"error_description": description}
    return Refused(description, 401, body=body, www_authenticate=challenge)


async def _authenticate(scope: Scope) -> AgentToken:
    """The request's agent, looked up once (the SDK's verifier reuses it): a static token or an OAuth grant's."""
    raw = parse_bearer(header(scope, b"authorization"))
    if not raw:
        raise _unauthenticated(
            scope, "Sign in: send 'Authorization: Bearer <token>', a Hook Bridge token or one from its OAuth server."
        )
    try:
        if raw.startswith(TOKEN_PREFIX):
            token = await token_cache.authenticate(raw)
        else:
            resource = _base(scope) + scope["path"].rstrip("/")
            token = await database_sync_to_async(oauth.authenticate)(raw, resource)
    except DatabaseError:
        logger.exception("The database is unreachable")
        raise rpc_refused(503, -32603, "Hook Bridge cannot reach its database right now; try again shortly.") from None
    if token is None:
        raise _unauthenticated(scope, "The token is unknown, revoked, expired or for another server.", "invalid_token")
    if token.scope != TokenScope.AGENT:
        message = f"Token '{token.name}' has scope '{token.scope}'; MCP tools need a token with scope 'agent'."
        raise rpc_refused(403, -32600, message)
    if (limited := over_rate(token)) is not None:
        await refuse_slowly(token.pk)
        raise rpc_refused(429, -32000, limited.message, retry_after=limited.retry_after)
    calls.verified_token.set((raw, token))
    return token


async def _refuse_asks_over_allowance(token: AgentToken, messages: list[Any], sets: tuple[str, ...]) -> None:
    """A 429 for a question the token may not put yet, here, before the SDK parses and dispatches it.

    The tool itself draws on the allowance (questions.asking.ask_allowance); refusing a flood at the edge
    keeps its cost to this check, so another token's answers are not kept waiting behind it.
    """
    names = toolsets.asking_tool_names(sets)
    if not names or not any(jsonrpc.called_tool(message) in names for message in messages):
        return
    if asking.worker_queue_full():
        # Every token's asks together: refused at once, not held in silence behind everyone's (issue 54).
        limit = settings.HOOKBRIDGE_QUEUED_ASKS
        raise rpc_refused(503, -32000, asking.WORKER_QUEUE_FULL.format(count=limit, limit=limit), retry_after="2")
    if asking.asks_queued_full(token.pk):
        # Past the worker's write rate: refused here, not queued behind the token's own asks.
        await refuse_slowly(token.pk)
        limit = settings.HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN
        message = (
            f"too many questions at once: token '{token.name}' has {limit} waiting to be written on this server "
            f"(HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN={limit}); try again in a second"
        )
        raise rpc_refused(429, -32000, message, retry_after="1")
    wait = asking.asks_spent(token.pk)
    if not wait:
        return
    await refuse_slowly(token.pk)
    per_minute = settings.HOOKBRIDGE_QUESTIONS_PER_MINUTE
    message = (
        f"too many questions: token '{token.name}' may ask {per_minute} a minute, re-asks included "
        f"(HOOKBRIDGE_QUESTIONS_PER_MINUTE={per_minute}); try again in {wait:.1f} s"
    )
    raise rpc_refused(429, -32000, message, retry_after=str(max(1, math.ceil(wait))))


def _connection(scope: Scope, token: AgentToken) -> tuple[Scope, bool]:
    """The scope without its Mcp-Session-Id (verified, and noted as the call's connection); whether it had one.

    A connection that began with initialize is the handshake era's: only the handshake's versions.
    """
    if scope["method"] in ("GET", "DELETE"):
        # Stateless: there is no stream to offer and no session to end (the spec's 405).
        raise rpc_refused(405, -32600, "Only POST is served here", allow="POST")
    session_id = header(scope, b"mcp-session-id")
    if not session_id:
        return scope, False
    connection = calls.connection_of(session_id, token.pk)
    if connection is None:
        message = "Unknown Mcp-Session-Id for this token; send initialize again for a new session."
        raise rpc_refused(404, -32600, message)
    calls.connection.set(connection)
    # The stateless SDK keeps no sessions: it never sees the id.
    return {**scope, "headers": [(k, v) for k, v in scope["headers"] if k != b"mcp-session-id"]}, True


class ResponseWatch:
    """The SDK's `send`, watched: the session id added, SSE headers sent at once, a cancelled call not answered.

    Also what the call's tools hand their answers to (`deliveries`): marked delivered once the
    whole response has gone out (`finished`), not before.
    """

    def __init__(self, send: Send, new_session_id: str | None) -> None:
        self._send, self._new_session_id = send, new_session_id
        self.deliveries: list[uuid.UUID] = []
        self.cancelled = calls.Flag()
        self.finished = False
        calls.pending_deliveries.set(self.deliveries)
        calls.cancelled_by_client.set(self.cancelled)

    async def __call__(self, message: Message) -> None:
        if self.cancelled.is_set() and message["type"] == "http.response.body" and jsonrpc.carries_a_response(message):
            # The handshake era's rule: a request its client cancelled is not answered. The SDK
            # cannot know (the cancel came on a POST of its own), so its answer is left out here.
            message = {**message, "body": b""}
        if message["type"] == "http.response.start":
            await self._start(message)
            return
        await self._send(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.finished = True

    async def _start(self, message: Message) -> None:
        headers = list(message.get("headers", []))
        if self._new_session_id is not None and message.get("status") == 200:
            headers.append((b"mcp-session-id", self._new_session_id.encode()))
            message = {**message, "headers": headers}
        await self._send(message)
        if any(k.lower() == b"content-type" and v.startswith(b"text/event-stream") for k, v in headers):
            # Empty bytes make daphne write the headers now instead of with the first event.
            await self._send({"type": "http.response.body", "body": b"", "more_body": True})


async def _mark_delivered(question_ids: list[uuid.UUID], finished: bool) -> None:
    if not finished:
        logger.info("Answers %s were not delivered: the client went away; a re-ask gets them", question_ids)
        return
    try:
        await database_sync_to_async(Question.mark_all_delivered)(question_ids)
    except DatabaseError:
        # Undelivered is the safe side: a re-ask gets the same answer again.
        logger.warning("Could not mark answers %s delivered", question_ids, exc_info=True)


def _replay(body: bytes, receive: Receive) -> Receive:
    # Handed over once and then let go: the SDK has its own copy, and a held call waits for minutes.
    unsent = [body]

    async def replay() -> Message:
        if unsent:
            return {"type": "http.request", "body": unsent.pop(), "more_body": False}
        # After the body, the next message is the client going away.
        return await receive()

    return replay


async def _route_cancellations(token: AgentToken, messages: list[Any]) -> None:
    found = jsonrpc.cancellations(messages)
    if not found:
        return
    layer = get_channel_layer()
    for request_id, reason in found:
        logger.info("Routing cancellation of request %s for token %s: %r", request_id, token.name, reason)
        message = {"type": "call.cancel", "reason": reason[:300]}
        await layer.group_send(calls.call_group(token.pk, request_id), message)
