"""The dashboard's WebSocket: HTML partials for htmx's ws extension, swapped out-of-band."""

from __future__ import annotations

from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from hookbridge_site.broadcast import DASHBOARD_GROUP
from hookbridge_site.consumers import LiveConsumer
from lifecycle.models import LifecycleEvent
from questions import watcher
from questions.models import Question

# Open dashboards in this process: serve --open opens one only when nobody is watching.
connected = 0


class DashboardConsumer(LiveConsumer):
    async def group_for(self) -> str:
        global connected
        connected += 1
        self.counted = True
        return DASHBOARD_GROUP

    async def disconnect(self, code: int) -> None:
        global connected
        if getattr(self, "counted", False):
            connected -= 1
        await super().disconnect(code)

    @staticmethod
    @database_sync_to_async
    def render_state() -> list[str]:
        pending = list(Question.objects.pending())
        watcher.known_pending.clear()
        watcher.known_pending.update(str(q.pk) for q in pending)
        last_event = LifecycleEvent.latest()
        context = {"pending": pending, "pending_count": len(pending), "last_event": last_event, "oob": True}
        return [render_to_string("questions/dashboard.html#live-state", context)]

    async def current_state(self) -> list[str]:
        watcher.ensure_running()
        return await self.render_state()
