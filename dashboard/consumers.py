"""The dashboard's WebSocket: HTML partials for htmx's ws extension, swapped out-of-band."""

from __future__ import annotations

import asyncio
from typing import Any

from core import presence
from core.broadcast import DASHBOARD_GROUP
from core.consumers import LiveConsumer
from core.db import database_sync_to_async
from dashboard import feed, state, watcher
from dashboard import runtime as dashboards
from tokens.models import Scope


class DashboardConsumer(LiveConsumer):
    async def group_for(self) -> str:
        return DASHBOARD_GROUP

    async def connect(self) -> None:
        await super().connect()
        if self.group:  # accepted: a refused visitor never joined
            dashboards.open_dashboards += 1
            await asyncio.to_thread(presence.publish, dashboards.open_dashboards)
            # Runs while dashboards are open here; it stops when the last one closes.
            watcher.ensure_running()

    async def disconnect(self, code: int) -> None:
        if self.group:
            dashboards.open_dashboards -= 1
            await asyncio.to_thread(presence.publish, dashboards.open_dashboards)
        await super().disconnect(code)

    async def current_state(self) -> list[str]:
        html: list[str] = await database_sync_to_async(state.live_state)()
        return html


class EventsConsumer(LiveConsumer):
    """For programs: every question, answer, lifecycle and session event as JSON (dashboard.feed)."""

    def refusal(self) -> int | None:
        # Answering tokens and people: an agent's token would see every other agent's questions.
        return self.token_refusal(Scope.ANSWER)

    async def group_for(self) -> str:
        return feed.EVENTS_GROUP

    async def current_state(self) -> list[str]:
        messages: list[str] = await database_sync_to_async(feed.current_state)()
        return messages

    async def events_message(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["text"])
