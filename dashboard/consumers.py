"""The dashboard's WebSocket: HTML partials for htmx's ws extension, swapped out-of-band.

A dashboard whose person answers in every project joins the one group every push goes to,
rendered once for all. Anyone else (issue 31) joins the groups of the projects they see, and
shows what those pushes carry as their role there allows (a viewer's cards have no answer
form); what is counted across projects (the pending count, the status bar) it renders for
itself when told it changed, at most every REFRESH_EVERY seconds.
"""

from __future__ import annotations

import asyncio
from typing import Any

from core import presence
from core.broadcast import DASHBOARD_GROUP, PARTIAL_GROUP, project_group
from core.consumers import LiveConsumer
from core.db import database_sync_to_async
from dashboard import feed, state, watcher
from dashboard import runtime as dashboards
from projects import access
from projects.models import Role
from tokens.models import Scope

# A partial dashboard's own renders of what it counts: no more often than this, the last one after the last change.
REFRESH_EVERY = 0.25


class DashboardConsumer(LiveConsumer):
    seen: access.Access = access.NOBODY
    refreshing: asyncio.Task[None] | None = None

    async def group_for(self) -> str:
        self.seen = await database_sync_to_async(access.of_user)(self.scope.get("user"))
        whole = await database_sync_to_async(self.seen.answers_everything)()
        return DASHBOARD_GROUP if whole else PARTIAL_GROUP

    async def also_groups(self) -> list[str]:
        if self.group == DASHBOARD_GROUP:
            return []
        return [project_group(pk) for pk in sorted(self.seen.project_ids or ())]

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
        if self.refreshing is not None:
            self.refreshing.cancel()
        await super().disconnect(code)

    async def current_state(self) -> list[str]:
        html: list[str] = await database_sync_to_async(state.live_state)(self.partial_access())
        return html

    def partial_access(self) -> access.Access:
        return access.EVERYTHING if self.group == DASHBOARD_GROUP else self.seen

    async def project_html(self, event: dict[str, Any]) -> None:
        """A change in one of this person's projects, as their role there shows it."""
        looks_only = self.seen.role(event["project"]) == Role.VIEWER
        await self.send(text_data=event["view"] if looks_only and event.get("view") is not None else event["html"])
        if event.get("recount"):
            await self.aggregates_stale({})

    async def aggregates_stale(self, event: dict[str, Any]) -> None:
        if self.refreshing is None or self.refreshing.done():
            self.refreshing = asyncio.create_task(self._refresh())

    async def _refresh(self) -> None:
        await asyncio.sleep(REFRESH_EVERY)
        self.refreshing = None
        html: str = await database_sync_to_async(state.counted_state)(self.seen)
        await self.send(text_data=html)


class EventsConsumer(LiveConsumer):
    """For programs: every question, answer, lifecycle and session event as JSON (dashboard.feed).

    A person sees their projects' events; a token bound to a project, that project's.
    """

    seen: access.Access = access.NOBODY

    def refusal(self) -> int | None:
        # Answering tokens and people: an agent's token would see every other agent's questions.
        return self.token_refusal(Scope.ANSWER)

    async def group_for(self) -> str:
        token = self.scope.get("agent_token")
        if token is not None:
            self.seen = access.of_token(token)
        else:
            self.seen = await database_sync_to_async(access.of_user)(self.scope.get("user"))
        return feed.EVENTS_GROUP if self.seen.everything else feed.EVENTS_PARTIAL_GROUP

    async def also_groups(self) -> list[str]:
        if self.group == feed.EVENTS_GROUP:
            return []
        return [feed.project_group(pk) for pk in sorted(self.seen.project_ids or ())]

    async def current_state(self) -> list[str]:
        messages: list[str] = await database_sync_to_async(feed.current_state)(self.seen)
        return messages

    async def events_message(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["text"])

    async def events_requeue(self, event: dict[str, Any]) -> None:
        """Many questions changed at once: the queue again, of this watcher's projects."""
        text: str = await database_sync_to_async(feed.queued)(self.seen)
        await self.send(text_data=text)
