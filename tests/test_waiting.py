"""The blocking wait: the row is the truth, a message only a hint."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

from questions.models import Answer, Question, Status
from questions.waiting import WaitPolicy, wait_for_resolution
from tokens.models import AgentToken

pytestmark = [pytest.mark.django_db(transaction=True)]


def policy(**overrides: float | bool | None) -> WaitPolicy:
    fields: dict[str, float | bool | None] = {
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
def read(question: Question) -> Question:
    return Question.objects.get(pk=question.pk)


def where(question: Question) -> str:
    return f"{settings.HOOKBRIDGE_PUBLIC_URL}/questions/{question.pk}/"


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
    assert resolved.status == Status.ANSWERED
    assert resolved.answer.text == "found by re-reading"
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


async def test_a_woken_call_returns_the_answer_its_wake_up_carried_without_reading_the_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from questions import waiting as waiting_module

    question = await ask()
    reads: list[object] = []
    read_row = waiting_module._read

    async def counting(question_id: object) -> Question:
        reads.append(question_id)
        return await read_row(question_id)

    monkeypatch.setattr(waiting_module, "_read", counting)
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(slice_seconds=30)))
    await asyncio.sleep(0.2)
    assert len(reads) == 1  # the first read, which found it pending
    await database_sync_to_async(question.record_answer)("carried", by_token=None, by_name="bob")
    resolved = await asyncio.wait_for(waiting, 2)
    assert len(reads) == 1
    stored = await database_sync_to_async(Question.objects.select_related("answer").get)(pk=question.pk)
    assert (resolved.status, resolved.resolved_at) == (stored.status, stored.resolved_at)
    assert (resolved.answer.text, resolved.answer.data, resolved.answer.answered_by) == (
        stored.answer.text,
        stored.answer.data,
        "bob",
    )


async def test_a_wake_up_without_an_answer_is_a_hint_to_read_the_row() -> None:
    question = await ask()
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(slice_seconds=30)))
    await asyncio.sleep(0.2)
    await database_sync_to_async(question.dismiss)("bob")
    resolved = await asyncio.wait_for(waiting, 2)
    assert resolved.status == Status.CANCELLED
    assert resolved.dismissed_by == "bob"


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
    # Nobody waits on it now: marked as left, so its re-attach window starts and the dashboards say so.
    left = await database_sync_to_async(Question.objects.get)(pk=question.pk)
    assert left.agent_left_at is not None
    assert left.agent_left_reason.startswith("the server's hold limit ran out")


async def test_an_approval_held_out_is_not_marked_as_left() -> None:
    question = await ask()
    held = policy(max_hold=0.3, leave_when_held_out=False)
    await asyncio.wait_for(wait_for_resolution(question.pk, held), 3)
    assert (await database_sync_to_async(Question.objects.get)(pk=question.pk)).agent_left_at is None


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
    assert reports[0] == (0.0, f"Waiting for a person: the question is on the dashboard at {where(question)}")
    assert reports[1][1].startswith("Waiting for a person, 0s so far")
    values = [elapsed for elapsed, _ in reports]
    assert values == sorted(values), "progress must grow"
    assert len(set(values)) == len(values), "progress must grow"


async def test_the_first_progress_report_goes_out_at_once() -> None:
    question = await ask()
    first = asyncio.get_running_loop().create_future()

    async def progress(elapsed: float, message: str) -> None:
        if not first.done():
            first.set_result(message)

    waiting = asyncio.create_task(
        wait_for_resolution(question.pk, policy(max_hold=None, progress_interval=30), progress=progress)
    )
    message = await asyncio.wait_for(first, 1)  # not after the 30 s interval
    assert where(question) in message
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_many_callers_going_away_at_once_are_marked_in_one_update(monkeypatch: pytest.MonkeyPatch) -> None:
    questions = [await ask(f"Hung up {n}?") for n in range(30)]
    updates: list[int] = []
    mark = Question.agents_stopped_waiting

    def counting(question_ids: list[object], why: str) -> int:
        updates.append(len(question_ids))
        return mark(question_ids, why)  # type: ignore[arg-type]

    monkeypatch.setattr(Question, "agents_stopped_waiting", counting)
    waiting = [asyncio.create_task(wait_for_resolution(q.pk, policy())) for q in questions]
    await asyncio.sleep(0.5)
    for task in waiting:
        task.cancel()  # the host went away with all its calls
    results = await asyncio.gather(*waiting, return_exceptions=True)
    assert all(isinstance(result, asyncio.CancelledError) for result in results)
    assert updates == [30]
    for question in questions:
        stored = await read(question)
        assert stored.status == Status.PENDING
        assert stored.agent_left_reason == "the connection to the agent closed"


async def test_a_caller_that_goes_away_leaves_the_question_answerable_and_marked() -> None:
    question = await ask()
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy()))
    await asyncio.sleep(0.3)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    stored = await read(question)
    assert stored.status == Status.PENDING
    assert stored.agent_left
    assert stored.agent_left_reason == "the connection to the agent closed"


@pytest.mark.parametrize(("cancel_after_close", "listens"), [(True, True), (False, False)])
async def test_a_closed_call_listens_for_a_late_cancel_only_where_one_can_come(
    cancel_after_close: bool, listens: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The handshake era's Esc may send its cancel just after the stream closed; on 2026-07-28 the
    # close is the cancel, and 2,000 calls hung up at once were each kept half a second for nothing.
    from questions import waiting as waiting_module

    listened: list[str] = []
    listen = waiting_module._cancel_after_the_close

    async def noting(layer: Any, channel: str, receiving: Any) -> Any:
        listened.append(channel)
        return await listen(layer, channel, receiving)

    monkeypatch.setattr(waiting_module, "_cancel_after_the_close", noting)
    question = await ask()
    waiting = asyncio.create_task(
        wait_for_resolution(
            question.pk, policy(), extra_groups=("mcpcall.late",), cancel_after_close=cancel_after_close
        )
    )
    await asyncio.sleep(0.2)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert bool(listened) is listens
    assert (await read(question)).agent_left


@pytest.mark.parametrize(
    ("reason", "aborted"),
    [
        ("McpError: MCP error -32001: Request timed out", False),  # the TypeScript SDK's timeout
        ("timed out after 5.0s", False),  # the Python SDK's
        ("AbortError: This operation was aborted", True),  # the TypeScript SDK on Esc (AbortController)
        ("caller cancelled", True),  # the Python SDK's cancelled task
        ("", True),  # no reason: the client said cancel, nothing about time
    ],
)
async def test_a_routed_cancel_aborts_or_gives_up_by_its_reason(reason: str, aborted: bool) -> None:
    from channels.layers import get_channel_layer

    question = await ask()
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(), extra_groups=("mcpcall.test",)))
    await asyncio.sleep(0.2)
    await get_channel_layer().group_send("mcpcall.test", {"type": "call.cancel", "reason": reason})
    returned = await asyncio.wait_for(waiting, 2)
    stored = await read(question)
    assert returned.status == stored.status
    if aborted:
        assert (stored.status, stored.cancel_reason) == (Status.CANCELLED, "client_cancelled")
    else:
        assert stored.status == Status.PENDING
        assert stored.agent_left
    assert reason in stored.agent_left_reason


async def test_a_cancel_the_transport_applied_itself_is_told_by_its_noted_reason() -> None:
    """stdio: the SDK cancels the handler; mcp_stdio noted the reason first."""
    question = await ask()
    waiting = asyncio.create_task(
        wait_for_resolution(question.pk, policy(), cancel_reason=lambda: "AbortError: This operation was aborted")
    )
    await asyncio.sleep(0.2)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert (await read(question)).status == Status.CANCELLED


async def test_a_call_waiting_again_takes_back_a_question_marked_as_left() -> None:
    question = await ask()
    await database_sync_to_async(question.agent_stopped_waiting)("the connection to the agent closed")
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy()))
    await asyncio.sleep(0.3)
    assert not (await read(question)).agent_left
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting


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
            message: dict[str, object] = await receive(channel)
        except asyncio.CancelledError:
            cancelled.append(channel)
            raise
        return message

    monkeypatch.setattr(layer, "receive", counting_receive)
    question = await ask()
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(slice_seconds=0.05)))
    await asyncio.sleep(0.5)  # ten slices
    await database_sync_to_async(question.record_answer)("after ten slices", by_token=None)
    resolved = await asyncio.wait_for(waiting, 2)
    assert resolved.answer.text == "after ten slices"
    assert len(started) == 1, (started, cancelled)
    assert cancelled == [], (started, cancelled)
