"""A tool call cut while its question is being written leaves the question answerable, not orphaned."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from channels.db import database_sync_to_async

from hookbridge_site import runtime
from mcpapi.asking import ask_and_wait
from questions.models import Kind, Question, Status

pytestmark = [pytest.mark.django_db(transaction=True)]


async def test_a_call_cut_while_its_question_is_written_marks_it_as_left(monkeypatch: pytest.MonkeyPatch) -> None:
    writing = asyncio.Event()
    ask = Question.ask

    def slow_ask(**fields: Any) -> tuple[Question, bool]:
        asyncio.run_coroutine_threadsafe(_set(writing), loop)
        time.sleep(0.3)  # the row is still being written when the client goes away
        return ask(**fields)

    loop = asyncio.get_running_loop()
    monkeypatch.setattr(Question, "ask", staticmethod(slow_ask))
    call = asyncio.create_task(ask_and_wait(None, tool="ask_question", kind=Kind.QUESTION, text="Cut?", timeout=None))  # type: ignore[arg-type]
    await writing.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    stored = await database_sync_to_async(Question.objects.get)(text="Cut?")
    assert stored.status == Status.PENDING
    assert stored.agent_left
    assert stored.agent_left_reason == "the connection to the agent closed"
    assert not runtime.asks_in_flight, "nothing is left for a stopping worker to wait for"


async def _set(event: asyncio.Event) -> None:
    event.set()
