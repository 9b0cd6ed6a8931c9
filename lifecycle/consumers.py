"""Session WebSockets: the session page and the overview (HTML), and each session's events for programs (JSON)."""

from __future__ import annotations

import json
import uuid
from typing import Any
from urllib.parse import parse_qs

from django.template.loader import render_to_string

from core.consumers import LiveConsumer
from core.db import database_sync_to_async
from lifecycle import live as lifecycle_live
from lifecycle.models import AgentSession, SessionEventType
from projects import access
from tokens.models import Scope


def _session(scope: dict[str, Any]) -> AgentSession | None:
    guid = scope["url_route"]["kwargs"]["guid"]
    return AgentSession.objects.filter(pk=uuid.UUID(str(guid))).first()


def _sees(scope: dict[str, Any], session: AgentSession | None) -> bool:
    return session is not None and access.of_user(scope.get("user")).sees(session.project_id)


class SessionPageConsumer(LiveConsumer):
    @database_sync_to_async
    def group_for(self) -> str:
        session = _session(self.scope)
        # Another project's session is refused exactly like an unknown one.
        return lifecycle_live.page_group(session.guid) if session and _sees(self.scope, session) else ""

    @database_sync_to_async
    def current_state(self) -> list[str]:
        session = _session(self.scope)
        return [render_to_string("lifecycle/session.html#live-parts", {"session": session, "oob": True})]

    async def session_changed(self, event: dict[str, Any]) -> None:
        for message in await self.current_state():
            await self.send(text_data=message)


class SessionsOverviewConsumer(LiveConsumer):
    async def group_for(self) -> str:
        return lifecycle_live.OVERVIEW_GROUP

    @database_sync_to_async
    def current_state(self) -> list[str]:
        query = parse_qs(self.scope.get("query_string", b"").decode())
        project = query.get("project", [""])[0]
        sessions = AgentSession.objects.for_overview(project, access.of_user(self.scope.get("user")).project_ids)
        return [render_to_string("lifecycle/sessions.html#session-rows", {"sessions": sessions, "oob": True})]

    async def sessions_changed(self, event: dict[str, Any]) -> None:
        for message in await self.current_state():
            await self.send(text_data=message)


class SessionConsumer(LiveConsumer):
    """For programs: every event of one session as JSON, the current state first.

    Logged-in people, the token that opened the session, and answering tokens may watch
    (tokens.websocket); another agent's session is refused exactly like an unknown one.
    """

    def refusal(self) -> int | None:
        return self.token_refusal(Scope.AGENT, Scope.ANSWER)

    @database_sync_to_async
    def group_for(self) -> str:
        session = _session(self.scope)
        token = self.scope.get("agent_token")
        if session is None or (token is not None and not session.readable_by(token)):
            return ""
        if token is None and not _sees(self.scope, session):
            return ""
        return session.group_name

    @database_sync_to_async
    def current_state(self) -> list[str]:
        session = _session(self.scope)
        assert session is not None
        # The latest event of each type, in the order they happened: what a reconnecting client needs.
        # One indexed look-up per type: a long run has thousands of progress events.
        latest = [session.events.filter(type=kind).last() for kind in SessionEventType.values]
        ordered = sorted((e for e in latest if e is not None), key=lambda event: (event.created_at, event.id))
        return [json.dumps(event.message()) for event in ordered]

    async def session_message(self, event: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(event["message"]))
