"""The blocking wait: the row is the truth, a message only a hint."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from mcpapi.models import AgentToken
from questions.models import Answer, Question, Status
from questions.waiting import WaitPolicy, wait_for_resolution

pytestmark = [pytest.mark.django_db(transaction=True)]


def policy(**overrides: float | None) -> WaitPolicy:
    fields: dict[str, float | None] = {
        "slice_seconds": 0.2,
        "max_hold": 10,
        "progress_interval": None,
    }
    fields.update(overrides)
    return WaitPolicy(**fields)  # type: ignore[arg-type]


@database_sync_to_async
def ask(text: str = "Wait for me?", timeout_seconds: float | None = None) -> Question:
    token, _ = AgentToken.issue("agent-a")
    return Question.ask(asker=token, asker_name="agent-a", text=text, options=[], timeout_seconds=timeout_seconds)[0]


@database_sync_to_async
def answer_without_a_wake_up(question: Question) -> None:
    """Write the answer the way a lost message would leave it: the row changes, nobody is told."""
    Question.objects.filter(pk=question.pk).update(status=Status.ANSWERED, resolved_at=timezone.now())
    Answer.objects.create(question=question, text="found by re-reading", answered_by="bob")


async def test_a_lost_wake_up_costs_one_slice_not_the_answer(caplog: pytest.LogCaptureFixture) -> None:
    question = await ask()
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(slice_seconds=0.3)))
    await asyncio.sleep(0.1)
    await answer_without_a_wake_up(question)
    with caplog.at_level("INFO", logger="questions.waiting"):
        resolved = await asyncio.wait_for(waiting, 2)
    assert resolved.status == Status.ANSWERED and resolved.answer.text == "found by re-reading"
    assert f"Question {question.pk} resolved without a wake-up" in caplog.text


async def test_an_answer_that_wakes_the_call_is_not_logged_as_a_lost_wake_up(caplog: pytest.LogCaptureFixture) -> None:
    question = await ask()
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(slice_seconds=0.2)))
    await asyncio.sleep(0.3)  # a slice passes first; the answer lands mid-way through the next
    with caplog.at_level("INFO", logger="questions.waiting"):
        await database_sync_to_async(question.record_answer)("woken", by_token=None)
        resolved = await asyncio.wait_for(waiting, 2)
    assert resolved.answer.text == "woken"
    assert "without a wake-up" not in caplog.text


async def test_an_answer_recorded_before_the_wait_starts_is_returned_at_once() -> None:
    question = await ask()
    await database_sync_to_async(question.record_answer)("early", by_token=None)
    resolved = await asyncio.wait_for(wait_for_resolution(question.pk, policy(slice_seconds=30)), 2)
    assert resolved.answer.text == "early"


async def test_the_wake_up_arrives_well_before_the_slice_ends() -> None:
    question = await ask()
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(slice_seconds=30)))
    await asyncio.sleep(0.2)
    await database_sync_to_async(question.record_answer)("woken", by_token=None)
    resolved = await asyncio.wait_for(waiting, 5)  # far less than the 30 s slice
    assert resolved.answer.text == "woken"


async def test_it_gives_back_a_pending_question_when_the_hold_runs_out() -> None:
    question = await ask()
    resolved = await asyncio.wait_for(wait_for_resolution(question.pk, policy(max_hold=0.5)), 3)
    assert resolved.status == Status.PENDING


async def test_it_times_the_question_out() -> None:
    question = await ask(timeout_seconds=0.5)
    resolved = await asyncio.wait_for(wait_for_resolution(question.pk, policy()), 3)
    assert resolved.status == Status.TIMED_OUT


async def test_it_reports_progress_at_the_interval() -> None:
    question = await ask(timeout_seconds=1.1)
    reports: list[tuple[float, str]] = []

    async def progress(elapsed: float, message: str) -> None:
        reports.append((elapsed, message))

    resolved = await asyncio.wait_for(
        wait_for_resolution(question.pk, policy(max_hold=None, progress_interval=0.2), progress=progress),
        5,
    )
    assert resolved.status == Status.TIMED_OUT
    assert 3 <= len(reports) <= 6, reports
    assert reports[0][1].startswith("Waiting for an answer, 0s elapsed")


async def test_a_cancelled_caller_marks_the_question_cancelled() -> None:
    question = await ask()
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy()))
    await asyncio.sleep(0.3)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    stored = await database_sync_to_async(Question.objects.get)(pk=question.pk)
    assert (stored.status, stored.cancel_reason) == (Status.CANCELLED, "client_disconnected")


@pytest.mark.parametrize(
    ("waiting", "expected"),
    [(1, 2.0), (400, 2.0), (401, 2.005), (2000, 10.0)],
)
def test_the_slice_grows_with_the_crowd_to_keep_rereads_near_the_budget(waiting: int, expected: float) -> None:
    from questions.waiting import slice_for

    assert slice_for(2.0, waiting, 200) == pytest.approx(expected)


async def test_one_receive_spans_the_slices_instead_of_being_cancelled_at_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """channels_redis loses a message that lands as its receive is cancelled: so none is, until the call ends."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    started: list[str] = []
    cancelled: list[str] = []
    receive = layer.receive

    async def counting_receive(channel: str) -> dict[str, object]:
        started.append(channel)
        try:
            return await receive(channel)
        except asyncio.CancelledError:
            cancelled.append(channel)
            raise

    monkeypatch.setattr(layer, "receive", counting_receive)
    question = await ask()
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(slice_seconds=0.05)))
    await asyncio.sleep(0.5)  # ten slices
    await database_sync_to_async(question.record_answer)("after ten slices", by_token=None)
    resolved = await asyncio.wait_for(waiting, 2)
    assert resolved.answer.text == "after ten slices"
    assert len(started) == 1 and cancelled == [], (started, cancelled)
