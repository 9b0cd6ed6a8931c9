"""The dashboard's WebSocket: HTML partials for htmx's ws extension, swapped out-of-band."""

from __future__ import annotations

from django.template.loader import render_to_string

from hookbridge_site.broadcast import DASHBOARD_GROUP
from hookbridge_site.consumers import LiveConsumer
from hookbridge_site.db import database_sync_to_async
from lifecycle.models import HookRun, LifecycleEvent
from questions import watcher
from questions.models import Question

# Open dashboards in this process: serve --open opens one only when nobody is watching.
connected = 0


class DashboardConsumer(LiveConsumer):
    async def group_for(self) -> str:
        return DASHBOARD_GROUP

    async def connect(self) -> None:
        global connected
        await super().connect()
        if self.group:  # accepted: a refused visitor never joined
            connected += 1
            # Runs while dashboards are counted here; it stops when the last one closes.
            watcher.ensure_running()

    async def disconnect(self, code: int) -> None:
        global connected
        if self.group:
            connected -= 1
        await super().disconnect(code)

    @staticmethod
    @database_sync_to_async
    def render_state() -> list[str]:
        pending = list(Question.objects.pending())
        watcher.known_pending.clear()
        watcher.known_pending.update(str(q.pk) for q in pending)
        hook_runs = HookRun.recent()
        watcher.known_runs = watcher.runs_signature(hook_runs)
        last_event = LifecycleEvent.latest()
        context = {
            "pending": pending,
            "pending_count": len(pending),
            "last_event": last_event,
            "hook_runs": hook_runs,
            "oob": True,
        }
        return [render_to_string("questions/dashboard.html#live-state", context)]

    async def current_state(self) -> list[str]:
        return await self.render_state()
