"""Lifecycle events from tool calls, written together when they arrive together.

Agents report flat out (a task started, a step done), and each event written on its own
took a hop to the database thread, a transaction and a session lookup: a worker took about
a third of the events per second that the same SDK does with a bare write (bench/compare.py).
The events reported while a write is under way now wait for it and go in the next one, in
one transaction with one lookup per agent; a lone event is written at once, as before.
"""

from __future__ import annotations

from core import runtime
from core.db import database_sync_to_async
from lifecycle.models import LifecycleEvent
from tokens.models import AgentToken


async def record(*, asker: AgentToken | None, asker_name: str, **fields: object) -> LifecycleEvent:
    """LifecycleEvent.record, from the event loop, together with the events reported meanwhile."""
    event: LifecycleEvent = await runtime.batch("reports", _write).add((asker, asker_name, fields))
    return event


async def _write(reports: list[tuple[AgentToken | None, str, dict[str, object]]]) -> list[LifecycleEvent]:
    events: list[LifecycleEvent] = await database_sync_to_async(LifecycleEvent.record_many)(reports)
    return events
