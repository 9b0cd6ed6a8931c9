"""The tokens this server process has checked, so a request needs no query to know who sent it.

Keyed by the token's digest (the raw secret is never kept). An entry is dropped in every
process when its row changes (revoked, re-scoped, deleted in the admin): the change is sent
to the channel layer group below once it commits, and each process listens on it. Expiry
needs no message: the cached row's `expires_at` is checked on every use.

An entry is trusted only while this process is listening: when the layer fails, the cache
is emptied and bypassed until the listener is back, so a revocation never waits on a lost
message. Entries are also re-read after HOOKBRIDGE_ACCESS_CHECK_SECONDS (3 s; a minute at most): what took access
away without a signal holds here within it, and `last_used_at` stays as fresh as without a cache.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time

from channels.layers import get_channel_layer
from django.conf import settings

from core import acting, broadcast, runtime
from core.db import database_sync_to_async
from tokens import runtime as state
from tokens.models import LAST_USED_PRECISION, AgentToken, digest

logger = logging.getLogger(__name__)

GROUP = "token-changes"
TASK = "token-changes"


def max_age() -> float:
    """How long a token's row is trusted, however it is used: a change that sends no signal (its person deactivated
    by a bulk update, a SQL statement) is refused over HTTP within it too (issue 54), as sockets close within it
    (tokens.standing). Cheap: one indexed read per token per worker every few seconds; `last_used_at` is still
    written at most once a minute."""
    return min(float(settings.HOOKBRIDGE_ACCESS_CHECK_SECONDS or 3.0), LAST_USED_PRECISION.total_seconds())


# A bound on memory whatever the traffic: past it the cache starts again.
MAX_ENTRIES = 10_000
# Channel layers drop a group member after a day (group_expiry); re-joining hourly keeps it.
REJOIN_EVERY = 3600.0


def _cached(key: str) -> AgentToken | None:
    if not state.token_listener_ready:
        return None
    entry = state.token_cache.get(key)
    if entry is None:
        return None
    token: AgentToken = entry[0]
    read_at = entry[1]
    if time.monotonic() - read_at > max_age() or not token.is_active:
        state.token_cache.pop(key, None)
        return None
    return token


def _remember(key: str, token: AgentToken | None, heard: int) -> None:
    if token is None or not state.token_listener_ready:
        return  # unknown secrets are not kept: guessing them must not fill the memory
    if heard != state.token_changes_heard:
        return  # a change arrived while the row was read: it may be older than the change
    if len(state.token_cache) >= MAX_ENTRIES:
        state.token_cache.clear()
    state.token_cache[key] = (token, time.monotonic())


async def authenticate(raw: str) -> AgentToken | None:
    """AgentToken.authenticate, answered from memory when this process has checked the token lately."""
    if not raw:
        return None
    ensure_listening()
    key = digest(raw)
    token = _cached(key)
    if token is None:
        heard = state.token_changes_heard
        token = await database_sync_to_async(AgentToken.authenticate)(raw)
        _remember(key, token, heard)
    if token is not None:
        # What this request changes is recorded as this token's doing (audit); its owner is looked up only then.
        acting.actor_now.set(functools.partial(acting.token, token))
    return token


def forget(token_hash: str) -> None:
    """Drop a token here and, through the channel layer, in every other process (sync code, after commit)."""
    state.token_cache.pop(token_hash, None)
    broadcast.send(GROUP, {"type": "token.changed", "digest": token_hash})


async def _listen() -> None:
    layer = get_channel_layer()
    while True:
        try:
            channel = await layer.new_channel()
            while True:
                await layer.group_add(GROUP, channel)
                state.token_listener_ready = True
                rejoin_at = time.monotonic() + REJOIN_EVERY
                while (left := rejoin_at - time.monotonic()) > 0:
                    try:
                        message = await asyncio.wait_for(layer.receive(channel), left)
                    except TimeoutError:
                        break
                    state.token_changes_heard += 1
                    state.token_cache.pop(message.get("digest", ""), None)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("Token changes cannot be heard; checking every token in the database", exc_info=True)
        # Messages may have been missed while the layer failed: nothing cached can be trusted.
        state.token_listener_ready = False
        state.token_cache.clear()
        await asyncio.sleep(1.0)


def ensure_listening() -> None:
    """Start this process's listener on the running loop (once; again if that loop has gone)."""
    if runtime.keep_running(TASK, _listen):
        # Nothing cached before it listens can be trusted.
        state.token_listener_ready = False
        state.token_cache.clear()
