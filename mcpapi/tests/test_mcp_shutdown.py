"""The worker's way down: the questions its calls waited on are marked as left, whatever context fired it."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import SyncToAsync

from core.db import database_sync_to_async
from mcpapi.http import MCPRouter
from questions.models import Question
from tokens.models import AgentToken

pytestmark = [pytest.mark.django_db(transaction=True)]


def never_built(sets: tuple[str, ...]) -> Any:
    raise AssertionError("no mount is needed to stop")


async def test_it_marks_the_questions_left_when_fired_from_inside_a_thread_hop() -> None:
    token, _ = await database_sync_to_async(AgentToken.issue)("agent-a")
    question, _ = await database_sync_to_async(Question.ask)(
        asker=token, asker_name="agent-a", text="Still there?", options=[]
    )
    router = MCPRouter(never_built)
    # What Twisted can do: run the shutdown trigger in the context of a request task that was
    # cancelled while it awaited sync_to_async, where asgiref refuses any further hop.
    inside = SyncToAsync.deadlock_context.set(True)
    try:
        stopping = router.start_shutdown([question.pk])
    finally:
        SyncToAsync.deadlock_context.reset(inside)
    await stopping
    marked = await database_sync_to_async(Question.objects.get)(pk=question.pk)
    assert marked.agent_left_reason == "the server restarted"
    assert marked.agent_left_at is not None
