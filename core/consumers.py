"""The base of every live WebSocket: logged-in users only, current state first, then forwarded pushes."""

from __future__ import annotations

import json
import logging
from typing import Any

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from core import runtime
from core.broadcast import ACCESS_GROUP, owner_group
from core.compat.daphne import SOCKET_CLOSED
from core.limits import MAX_MESSAGE_BYTES, size_of

logger = logging.getLogger(__name__)

# Offered by browser code that authenticates with a token (tokens.websocket); accepted when offered.
SUBPROTOCOL = "hookbridge"

# Close codes: who you are is unknown, or what you are may not watch this, or there is no such thing.
UNAUTHENTICATED, FORBIDDEN, NOT_FOUND = 4401, 4403, 4404
# Who sees what changed (a role given or taken, a project joined or left): the client connects again at once and
# is shown what it may see now (HTTP's 205 Reset Content in the 4000s). Not 1012: the protocol reserves it for
# the endpoint itself and daphne refuses to send it (it logged "Exception inside application" and sent 1011).
# htmx's ws extension reconnects only after 1006/1011/1012/1013; hookbridge.js does after this one.
RECONNECT = 4205
# More sockets than HOOKBRIDGE_MAX_SOCKETS_PER_TOKEN for one token or person (HTTP's 429 in the 4000s).
TOO_MANY = 4429
# The token was revoked, or the person deactivated, while the socket was open (HTTP's 410 in the 4000s). htmx's
# ws extension does not reconnect after it: there is nothing left to reconnect as.
REVOKED = 4410


class LiveConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]  # channels ships no type hints
    """Logged-in users only, unless a subclass says otherwise; it names the group and the state sent on (re)connect."""

    group: str = ""
    # Groups joined beside `group` (a partial dashboard's projects), and, for a person, the one that announces
    # access changes.
    also: tuple[str, ...] = ()
    counted_as: tuple[str, int] | None = None

    def refusal(self) -> int | None:
        """Why this connection may not watch at all (a close code), or None: logged-in users only."""
        return self.user_refusal()

    def user_refusal(self) -> int | None:
        user = self.scope.get("user")
        return None if user is not None and user.is_authenticated else UNAUTHENTICATED

    def token_refusal(self, *scopes: str) -> int | None:
        """For consumers programs may use: a logged-in user, or a bearer token with one of `scopes`.

        tokens.websocket puts the token (None when it is unknown) in the scope.
        """
        if "agent_token" not in self.scope:
            return self.user_refusal()
        token = self.scope["agent_token"]
        if token is None:
            return UNAUTHENTICATED
        return None if token.scope in scopes else FORBIDDEN

    async def connect(self) -> None:
        refused = self.refusal()
        if refused is not None:
            await self.close(code=refused)
            return
        self.group = await self.group_for()
        if not self.group:
            await self.close(code=NOT_FOUND)
            return
        subprotocol = SUBPROTOCOL if SUBPROTOCOL in self.scope.get("subprotocols", []) else None
        owner = self.owner()
        if owner is not None and runtime.sockets_per_owner[owner] >= settings.HOOKBRIDGE_MAX_SOCKETS_PER_TOKEN:
            # Accepted, told why, then closed: a refusal before accepting reaches the client as a bare 403,
            # and daphne sends no close reason.
            limit, self.group = settings.HOOKBRIDGE_MAX_SOCKETS_PER_TOKEN, ""
            error = (
                f"too many sockets: {limit} are open already for this {owner[0]}, the most one may hold "
                f"(HOOKBRIDGE_MAX_SOCKETS_PER_TOKEN={limit}); close some, or raise HOOKBRIDGE_MAX_SOCKETS_PER_TOKEN"
            )
            await self.accept(subprotocol)
            await super().send(text_data=json.dumps({"type": "error", "error": error, "code": TOO_MANY}))
            await self.close(code=TOO_MANY)
            return
        if owner is not None:
            runtime.sockets_per_owner[owner] += 1
            self.counted_as = owner
        # A person's page hears when who sees what changed; a token's watch does not depend on it.
        person = self.scope.get("agent_token") is None
        # Every socket also hears when its own token or person loses access, whichever worker that happens on.
        mine = [owner_group(*owner)] if owner is not None else []
        self.also = (*await self.also_groups(), *([ACCESS_GROUP] if person else []), *mine)
        for group in (self.group, *self.also):
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept(subprotocol)
        # A client that (re)connects gets the whole current state at once.
        for message in await self.current_state():
            await self.send(text_data=message)

    async def disconnect(self, code: int) -> None:
        if self.counted_as is not None:
            runtime.sockets_per_owner[self.counted_as] -= 1
            if runtime.sockets_per_owner[self.counted_as] <= 0:
                del runtime.sockets_per_owner[self.counted_as]
            self.counted_as = None
        if self.group:
            for group in (self.group, *self.also):
                await self.channel_layer.group_discard(group, self.channel_name)
            self.group, self.also = "", ()

    def owner(self) -> tuple[str, int] | None:
        """Whose sockets this one counts among: the token's, else the person's."""
        token = self.scope.get("agent_token")
        if token is not None:
            return ("token", token.pk)
        user = self.scope.get("user")
        if user is not None and user.is_authenticated:
            return ("user", user.pk)
        return None

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels' own dispatch first closes stale database connections, on the shared
        # database thread, before every handler: a push to 100 open pages waited for 100
        # turns of the thread the MCP tools need, and closed the SQLite connection
        # core.db keeps open. Handlers here that read the database do it
        # through core.db.database_sync_to_async, which tends the connections.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def send(self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False) -> None:
        # A frame over daphne's limit closes the socket with 1011, and the page would reconnect into
        # the same state forever: what is built for a socket fits (core.limits), and anything
        # that still would not is dropped here, loudly, rather than taking every dashboard down.
        # Every push goes through here, once per socket: only text that could be over the limit is encoded.
        if text_data is not None:
            size = size_of(text_data) if len(text_data) > MAX_MESSAGE_BYTES // 4 else len(text_data)
        else:
            size = len(bytes_data or b"")
        if size > MAX_MESSAGE_BYTES:
            logger.error(
                "Not sent to %s: a %d-byte message is over the %d-byte limit",
                self.scope.get("path"),
                size,
                MAX_MESSAGE_BYTES,
            )
            return
        try:
            await super().send(text_data=text_data, bytes_data=bytes_data, close=close)
        except SOCKET_CLOSED:
            # The page went away while this push was on its way: nothing to tell it any more.
            logger.debug("Not sent to %s: the socket had closed", self.scope.get("path"))

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # Pages send nothing we act on: answers go through HTMX POSTs, with CSRF.
        return

    async def group_for(self) -> str:
        raise NotImplementedError

    async def also_groups(self) -> list[str]:
        return []

    async def access_changed(self, event: dict[str, Any]) -> None:
        """Who sees what changed: the client connects again, and is let see what it may now."""
        await self.close(code=RECONNECT)

    async def access_revoked(self, event: dict[str, Any]) -> None:
        """This socket's token was revoked, or its person deactivated: it closes, saying so."""
        await self.close(code=REVOKED)

    async def current_state(self) -> list[str]:
        raise NotImplementedError

    async def dashboard_html(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["html"])

    async def state_resync(self, event: dict[str, Any]) -> None:
        """A push too large to cross processes (core.local_layer): send the whole current state."""
        for message in await self.current_state():
            await self.send(text_data=message)
