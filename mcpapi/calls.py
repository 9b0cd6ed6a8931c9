"""In-flight tool calls: how a cancellation finds the call it is meant for.

Every client numbers its JSON-RPC requests from 0, so (token, request id) is not
one call: two windows of one developer, sharing a token, both have a request 3.
Each handshake-era connection therefore gets an identity at `initialize`, an
`Mcp-Session-Id` that any worker can verify without shared memory: a random
value and an HMAC (keyed by SECRET_KEY) of it with the token. A cancellation is
routed by (token, connection, request id). A client that never sends a session
id (the 2026-07-28 era, where closing the stream is the cancellation) keeps the
(token, request id) key.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

import anyio
from channels.layers import get_channel_layer
from django.utils.crypto import constant_time_compare, salted_hmac

from core import layer_groups

if TYPE_CHECKING:
    from tokens.models import AgentToken

_SESSION_SALT = "hookbridge.mcp-session-id"


def _session_mac(token_id: int, nonce: str) -> str:
    return salted_hmac(_SESSION_SALT, f"{token_id}:{nonce}", algorithm="sha256").hexdigest()[:32]


def issue_session_id(token_id: int) -> str:
    """A new connection's Mcp-Session-Id: `<random>.<mac>`, visible ASCII as the spec asks."""
    nonce = secrets.token_urlsafe(16)
    return f"{nonce}.{_session_mac(token_id, nonce)}"


def connection_of(session_id: str, token_id: int) -> str | None:
    """The connection a session id names, or None if it was not issued to this token (or under this key)."""
    nonce, _, mac = session_id.partition(".")
    if not nonce or not mac or not constant_time_compare(mac, _session_mac(token_id, nonce)):
        return None
    return nonce


# Whether the request in hand may be cancelled by a notifications/cancelled of its own (the
# handshake era), rather than only by closing its stream (2026-07-28): set by the /mcp router.
# A call whose stream closed listens a moment for such a cancel only when one can come.
cancellable_by_notification: ContextVar[bool] = ContextVar("cancellable_by_notification", default=True)

# The client connection of the request in hand ("" for a client without a session id):
# set by the /mcp router, read when a call joins its cancellation group.
connection: ContextVar[str] = ContextVar("connection", default="")


def call_group(token_id: int | str, request_id: str) -> str:
    """The channel-layer group of one in-flight call: (token, the request in hand's connection, JSON-RPC request id)."""
    key = hashlib.sha256(f"{token_id}:{connection.get()}:{request_id}".encode()).hexdigest()[:40]
    return f"mcpcall.{key}"


logger = logging.getLogger(__name__)


@asynccontextmanager
async def cancel_scope_for_call(token_id: int | None, request_id: str | int | None) -> AsyncIterator[anyio.CancelScope]:
    """A cancel scope that the client's notifications/cancelled for this call cancels.

    Over stateless HTTP the cancellation arrives as a POST of its own, possibly on another
    worker; the /mcp router relays it to the call's group. Without a token (stdio) the
    SDK cancels the handler itself, so the scope is a plain one.
    """
    with anyio.CancelScope() as scope:
        if token_id is None or request_id is None:
            yield scope
            return
        layer = get_channel_layer()
        group = call_group(token_id, str(request_id))
        try:
            channel = await layer.new_channel("hookbridge.call")
            await layer.group_add(group, channel)
        except Exception:
            logger.warning("Channel layer unavailable: call %s cannot be cancelled by notification", request_id)
            yield scope
            return

        async def listen() -> None:
            try:
                while (await layer.receive(channel)).get("type") != "call.cancel":
                    pass
            except Exception:
                logger.warning("Channel layer failed: call %s cannot be cancelled by notification", request_id)
                return
            logger.info("Call %s cancelled by its client", request_id)
            scope.cancel()

        listener = asyncio.create_task(listen())
        try:
            yield scope
        finally:
            listener.cancel()
            await layer_groups.leave([group], channel)


# (raw token, the token it authenticated as) for the request in hand: the /mcp
# router looks the token up once, and the SDK's verifier reuses the result.
verified_token: ContextVar[tuple[str, AgentToken | None] | None] = ContextVar("verified_token", default=None)

# Answers handed to the response being written: the /mcp router marks them delivered
# once the whole response has gone out, and not when the client went away first (an
# answer marked delivered too soon would be lost, and the re-ask would be a new question).
# None outside the router (stdio), where the result goes straight down the pipe.
pending_deliveries: ContextVar[list[uuid.UUID] | None] = ContextVar("pending_deliveries", default=None)


class Flag:
    """Set once, read later: an asyncio.Event nobody waits on, without the Event's waiter deque (760 bytes, kept by
    every held call for its whole wait; tracemalloc, issue 60)."""

    __slots__ = ("_is_set",)

    def __init__(self) -> None:
        self._is_set = False

    def set(self) -> None:
        self._is_set = True

    def is_set(self) -> bool:
        return self._is_set


# Set by the /mcp router for each POST; set by a call its client cancelled with notifications/cancelled,
# so that the router leaves the SDK's answer out (a cancelled request is not answered). None over stdio,
# where the SDK receives the cancel itself and already writes nothing.
cancelled_by_client: ContextVar[Flag | None] = ContextVar("cancelled_by_client", default=None)

# Who asks when there is no token (stdio without --token): set by mcp_stdio.
local_asker_name: ContextVar[str] = ContextVar("local_asker_name", default="local agent")


class Background:
    """A tools/call that may be answered with a task (mcpapi.tasks): an asking tool leaves its task here and
    returns without waiting. Approvals never do: Claude Code's hooks and its permission prompt are gates."""

    def __init__(self, *, offer_to_client: bool = False, client: str = "") -> None:
        self.task_id: str | None = None
        # HOOKBRIDGE_ANSWER_IN_CLIENT, and the client takes forms: the question is also offered there.
        self.offer_to_client = offer_to_client
        self.client = client


background: ContextVar[Background | None] = ContextVar("background", default=None)
