"""The base of every live WebSocket: logged-in users only, current state first, then forwarded pushes."""

from __future__ import annotations

from typing import Any

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer


class LiveConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]  # channels ships no type hints
    """Logged-in users only; subclasses name the group and the state sent on (re)connect."""

    group: str = ""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.group = await self.group_for()
        if not self.group:
            await self.close(code=4404)
            return
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        # A client that (re)connects gets the whole current state at once.
        for message in await self.current_state():
            await self.send(text_data=message)

    async def disconnect(self, code: int) -> None:
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels' own dispatch first closes stale database connections, on the shared
        # database thread, before every handler: a push to 100 open pages waited for 100
        # turns of the thread the MCP tools need, and closed the SQLite connection
        # hookbridge_site.db keeps open. Handlers here that read the database do it
        # through hookbridge_site.db.database_sync_to_async, which tends the connections.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # Pages send nothing we act on: answers go through HTMX POSTs, with CSRF.
        return

    async def group_for(self) -> str:
        raise NotImplementedError

    async def current_state(self) -> list[str]:
        raise NotImplementedError

    async def dashboard_html(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["html"])

    async def state_resync(self, event: dict[str, Any]) -> None:
        """A push too large to cross processes (hookbridge_site.local_layer): send the whole current state."""
        for message in await self.current_state():
            await self.send(text_data=message)
