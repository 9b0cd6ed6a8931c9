"""Bearer-token authentication for the JSON API (the /mcp mount uses the SDK's own layer)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from core import limits
from core.asgi_handler import ON_THE_DATABASE_THREAD
from core.db import on_the_database_thread
from core.jsonapi import json_error
from tokens import cache
from tokens import runtime as state
from tokens.models import AgentToken, Scope


class TokenRequest(HttpRequest):
    agent_token: AgentToken


def parse_bearer(header: str) -> str:
    """The token in an `Authorization: Bearer <token>` header value, or "" for anything else."""
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return ""


def bearer_token(request: HttpRequest) -> str:
    return parse_bearer(request.headers.get("Authorization", ""))


def client_address(request: HttpRequest) -> str | None:
    """Where a request came from: behind a trusted proxy, the first X-Forwarded-For entry."""
    if settings.HOOKBRIDGE_TRUST_PROXY_HEADERS:
        forwarded = request.headers.get("X-Forwarded-For", "").split(",")[0].strip()
        if forwarded:
            return forwarded
    return request.META.get("REMOTE_ADDR") or None


@dataclass(frozen=True)
class OverRate:
    """A request refused for its token's allowance: what to say, and the whole seconds to wait (Retry-After)."""

    message: str
    retry_after: str


def over_rate(token: AgentToken) -> OverRate | None:
    """Why `token` may not make another request now (its allowance here is spent), or None.

    Every request a token makes counts (a re-ask as much as a new ask, a read as much as an answer), so one
    token's flood cannot slow another's answers: HOOKBRIDGE_REQUESTS_PER_MINUTE a token, in bursts of a tenth.
    """
    per_minute = settings.HOOKBRIDGE_REQUESTS_PER_MINUTE
    if not per_minute:
        return None
    wait = limits.take(state.request_buckets, token.pk, per_minute=per_minute, burst=max(10, per_minute // 10))
    if not wait:
        return None
    message = (
        f"too many requests: token '{token.name}' may make {per_minute} a minute on this server "
        f"(HOOKBRIDGE_REQUESTS_PER_MINUTE={per_minute}); try again in {wait:.1f} s, or raise "
        "HOOKBRIDGE_REQUESTS_PER_MINUTE"
    )
    return OverRate(message, str(max(1, math.ceil(wait))))


# A client that ignores Retry-After and asks again at once kept the worker busy answering refusals (600-800
# a second on one core, bench/fairness.py), and another token's answers waited behind them: each refusal is
# held a second (its Retry-After is at least that), so a flooding client slows to a refusal a second per
# connection. Only a few are held per token, so holding costs little and cannot pile connections up.
REFUSAL_HOLD_SECONDS = 1.0
HELD_REFUSALS_PER_TOKEN = 64


async def refuse_slowly(token_id: int) -> None:
    """Hold a refusal of `token_id` for REFUSAL_HOLD_SECONDS before it is sent; past
    HELD_REFUSALS_PER_TOKEN held at once, it is sent at once."""
    held = state.held_refusals
    if held.get(token_id, 0) >= HELD_REFUSALS_PER_TOKEN:
        return
    held[token_id] = held.get(token_id, 0) + 1
    try:
        await asyncio.sleep(REFUSAL_HOLD_SECONDS)
    finally:
        held[token_id] -= 1
        if not held[token_id]:
            del held[token_id]


def token_required(
    *scopes: Scope,
) -> Callable[[Callable[..., HttpResponse]], Callable[..., Coroutine[Any, Any, HttpResponse]]]:
    """A valid bearer token (401 without one) whose scope is one of `scopes` (403 otherwise).

    The view becomes async: the token is checked on the event loop (from tokens.cache, with
    no query for a token this process knows), and the sync view body, with all its database
    work, runs in one hop to the database thread (core.db.on_the_database_thread).
    A refused request never leaves the loop.
    """

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., Coroutine[Any, Any, HttpResponse]]:
        body = on_the_database_thread(view)

        @wraps(view)
        async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            token = await cache.authenticate(bearer_token(request))
            if token is None:
                response = json_error("A valid 'Authorization: Bearer <token>' header is required.", status=401)
                response["WWW-Authenticate"] = 'Bearer realm="hookbridge"'
                return response
            if (limited := over_rate(token)) is not None:
                await refuse_slowly(token.pk)
                response = json_error(limited.message, status=429)
                response["Retry-After"] = limited.retry_after
                return response
            if token.scope not in scopes:
                allowed = " or ".join(f"'{scope}'" for scope in scopes)
                message = f"Token '{token.name}' has scope '{token.scope}'; this needs a token with scope {allowed}."
                return json_error(message, status=403)
            request.agent_token = token  # type: ignore[attr-defined]
            answered: HttpResponse = await body(request, *args, **kwargs)
            return answered

        # Django's handler may skip the thread of the request's own for it (core.asgi_handler).
        setattr(wrapper, ON_THE_DATABASE_THREAD, True)
        return wrapper

    return decorator
