"""The dashboard's WebSocket: HTML partials for htmx's ws extension, swapped out-of-band."""

from __future__ import annotations

from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from hookbridge_site.broadcast import DASHBOARD_GROUP
from hookbridge_site.consumers import LiveConsumer
from lifecycle.models import LifecycleEvent
from questions.models import Question


class DashboardConsumer(LiveConsumer):
    async def group_for(self) -> str:
        return DASHBOARD_GROUP

    @database_sync_to_async
    def current_state(self) -> list[str]:
        pending = list(Question.objects.pending())
        context = {
            "pending": pending,
            "pending_count": len(pending),
            "last_event": LifecycleEvent.latest(),
            "oob": True,
        }
        return [render_to_string("questions/dashboard.html#live-state", context)]
