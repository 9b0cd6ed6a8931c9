"""The dashboard's WebSocket: join the group, send the current state, forward pushes."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string

from hookbridge_site.broadcast import DASHBOARD_GROUP
from lifecycle.models import LifecycleEvent
from questions.models import Question


@database_sync_to_async
def _current_state() -> str:
    pending = list(Question.objects.pending())
    return render_to_string(
        "questions/dashboard.html#live-state",
        {
            "pending": pending,
            "pending_count": len(pending),
            "last_event": LifecycleEvent.latest(),
            "oob": True,
        },
    )


class DashboardConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        await self.channel_layer.group_add(DASHBOARD_GROUP, self.channel_name)
        await self.accept()
        # A browser that (re)connects gets the whole current state at once.
        await self.send(text_data=await _current_state())

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(DASHBOARD_GROUP, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # The page sends nothing we act on: answers go through the HTMX POST, with CSRF.
        return

    async def dashboard_html(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["html"])
