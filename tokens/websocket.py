"""Bearer tokens on WebSockets, for programs: a bot, a backend, a custom frontend.

A program sends `Authorization: Bearer <token>`; browser code, which cannot set headers
on a WebSocket, offers the subprotocols `hookbridge` and `bearer.<token>`. Never a token
in the query string: URLs end up in access logs.

A connection with a bearer credential needs no Origin check: unlike a cookie, a token
is never sent by a browser on its own, so another site's page cannot borrow it. Any
other connection goes through the cookie stack, with its Origin check.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser

from tokens import cache as token_cache
from tokens import standing
from tokens.auth import parse_bearer

BEARER_PROTOCOL_PREFIX = "bearer."

ASGIApp = Any


def offered_token(scope: dict[str, Any]) -> str | None:
    """The bearer token a WebSocket handshake carries; "" for a malformed one, None for none at all."""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            return parse_bearer(value.decode("latin1"))
    protocols: list[str] = scope.get("subprotocols", [])
    for protocol in protocols:
        if protocol.startswith(BEARER_PROTOCOL_PREFIX):
            return protocol[len(BEARER_PROTOCOL_PREFIX) :]
    return None


class BearerTokenAuth:
    """Routes a handshake with a bearer credential to `token_app`, with `agent_token` in its scope.

    `agent_token` is None when the token is unknown or revoked: the consumer refuses it
    (4401). Without a credential the handshake goes to `cookie_app`.
    """

    def __init__(self, token_app: ASGIApp, cookie_app: ASGIApp) -> None:
        self.token_app = token_app
        self.cookie_app = cookie_app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        standing.ensure_watching()  # every socket's owner is checked again while it is open, whoever it is
        raw = offered_token(scope)
        if raw is None:
            await self.cookie_app(scope, receive, send)
            return
        token = await token_cache.authenticate(raw)
        # The subprotocol carrying the secret is not the client's to see echoed back.
        protocols = [p for p in scope.get("subprotocols", []) if not p.startswith(BEARER_PROTOCOL_PREFIX)]
        await self.token_app(
            {**scope, "agent_token": token, "user": AnonymousUser(), "subprotocols": protocols}, receive, send
        )
