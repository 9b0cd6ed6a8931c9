"""Lifecycle events reported at the same moment are written together, each call getting its own event."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async

from lifecycle import reporting
from lifecycle.models import AgentSession, LifecycleEvent
from tokens.models import AgentToken

pytestmark = [pytest.mark.django_db(transaction=True)]


async def test_events_reported_together_are_written_in_one_go_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = await database_sync_to_async(AgentToken.issue)("agent-a")
    b, _ = await database_sync_to_async(AgentToken.issue)("agent-b")
    run = await database_sync_to_async(AgentSession.open)(token=b, name="b's run")
    writes: list[int] = []
    record_many = LifecycleEvent.record_many

    def counting(reports: list[Any]) -> list[LifecycleEvent]:
        writes.append(len(reports))
        return record_many(reports)

    monkeypatch.setattr(LifecycleEvent, "record_many", counting)
    calls = [
        reporting.record(asker=a if n % 2 else b, asker_name="agent-a" if n % 2 else "agent-b",
                         event_type="task-started", phase_name=f"step {n}")
        for n in range(20)
    ]  # fmt: skip
    events = await asyncio.gather(*calls)
    assert [event.phase_name for event in events] == [f"step {n}" for n in range(20)]
    assert len(writes) < 20
    assert sum(writes) == 20
    stored = await database_sync_to_async(lambda: list(LifecycleEvent.objects.order_by("id")))()
    assert [event.phase_name for event in stored] == [f"step {n}" for n in range(20)]
    # Each event belongs to its own agent's open session, if it has one.
    assert {event.session_id for event in stored if event.asker_id == b.pk} == {run.pk}
    assert {event.session_id for event in stored if event.asker_id == a.pk} == {None}


async def test_a_failed_write_fails_every_call_in_it_and_the_next_report_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, _ = await database_sync_to_async(AgentToken.issue)("agent-a")
    record_many = LifecycleEvent.record_many

    def failing(reports: list[Any]) -> list[LifecycleEvent]:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(LifecycleEvent, "record_many", failing)
    outcomes = await asyncio.gather(
        *(reporting.record(asker=a, asker_name="agent-a", event_type="task-started") for _ in range(3)),
        return_exceptions=True,
    )
    assert all(isinstance(outcome, RuntimeError) for outcome in outcomes)
    monkeypatch.setattr(LifecycleEvent, "record_many", record_many)
    event = await reporting.record(asker=a, asker_name="agent-a", event_type="task-completed")
    assert event.pk is not None
