"""questions.asking: the one blocking ask and its wait; the row is the truth, a message only a hint."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from core import db as core_db
from core.limits import OverLimit
from questions import asking, runtime
from questions.asking import Caller, WaitPolicy, wait_for_resolution
from questions.models import Answer, CancelReason, Question, RateLimited, Status
from questions.wakeups import wake_up
from tokens.models import AgentToken

pytestmark = [pytest.mark.django_db(transaction=True)]


async def until(condition: Callable[[], bool], timeout: float = 10) -> None:
    """Wait for `condition` as the event loop runs, instead of guessing how long the threads take."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never came true"
        await asyncio.sleep(0.01)


def policy(**overrides: float | bool | None) -> WaitPolicy:
    fields: dict[str, float | bool | None] = {
        "slice_seconds": 0.2,
        "max_hold": 60,
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
    with caplog.at_level("INFO", logger="questions.asking"):
        resolved = await asyncio.wait_for(waiting, 60)
    assert resolved.status == Status.ANSWERED
    assert resolved.answer.text == "found by re-reading"
    assert f"Question {question.pk} resolved without a wake-up" in caplog.text


async def test_an_answer_that_wakes_the_call_is_not_logged_as_a_lost_wake_up(caplog: pytest.LogCaptureFixture) -> None:
    question = await ask()
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(slice_seconds=0.2)))
    await asyncio.sleep(0.3)  # a slice passes first; the answer lands mid-way through the next
    with caplog.at_level("INFO", logger="questions.asking"):
        await database_sync_to_async(question.record_answer)("woken", by_token=None)
        resolved = await asyncio.wait_for(waiting, 60)
    assert resolved.answer.text == "woken"
    assert "without a wake-up" not in caplog.text


async def test_a_woken_call_returns_the_answer_its_wake_up_carried_without_reading_the_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    question = await ask()
    reads: list[object] = []
    read_row = asking._read

    async def counting(question_id: object) -> Question:
        reads.append(question_id)
        return await read_row(question_id)

    monkeypatch.setattr(asking, "_read", counting)
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(slice_seconds=600)))
    await asyncio.sleep(0.2)
    assert len(reads) == 1  # the first read, which found it pending
    await database_sync_to_async(question.record_answer)("carried", by_token=None, by_name="bob")
    resolved = await asyncio.wait_for(waiting, 60)
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
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(slice_seconds=600)))
    await asyncio.sleep(0.2)
    await database_sync_to_async(question.dismiss)("bob")
    resolved = await asyncio.wait_for(waiting, 60)
    assert resolved.status == Status.CANCELLED
    assert resolved.dismissed_by == "bob"


async def test_an_answer_recorded_before_the_wait_starts_is_returned_at_once() -> None:
    question = await ask()
    await database_sync_to_async(question.record_answer)("early", by_token=None)
    resolved = await asyncio.wait_for(wait_for_resolution(question.pk, policy(slice_seconds=600)), 60)
    assert resolved.answer.text == "early"


async def test_the_wake_up_arrives_well_before_the_slice_ends() -> None:
    question = await ask()
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(slice_seconds=600)))
    await asyncio.sleep(0.2)
    await database_sync_to_async(question.record_answer)("woken", by_token=None)
    resolved = await asyncio.wait_for(waiting, 60)  # far less than the 600 s slice
    assert resolved.answer.text == "woken"


async def test_it_gives_back_a_pending_question_when_the_hold_runs_out() -> None:
    question = await ask()
    resolved = await asyncio.wait_for(wait_for_resolution(question.pk, policy(max_hold=0.5)), 60)
    assert resolved.status == Status.PENDING
    # Nobody waits on it now: marked as left, so its re-attach window starts and the dashboards say so.
    left = await database_sync_to_async(Question.objects.get)(pk=question.pk)
    assert left.agent_left_at is not None
    assert left.agent_left_reason.startswith("the server's hold limit ran out")


async def test_an_approval_held_out_is_not_marked_as_left() -> None:
    question = await ask()
    held = policy(max_hold=0.3, leave_when_held_out=False)
    await asyncio.wait_for(wait_for_resolution(question.pk, held), 60)
    assert (await database_sync_to_async(Question.objects.get)(pk=question.pk)).agent_left_at is None


async def test_it_times_the_question_out() -> None:
    question = await ask(timeout_seconds=0.5)
    resolved = await asyncio.wait_for(wait_for_resolution(question.pk, policy()), 60)
    assert resolved.status == Status.TIMED_OUT


async def test_it_reports_progress_at_the_interval() -> None:
    question = await ask(timeout_seconds=1.1)
    reports: list[tuple[float, str]] = []

    async def progress(elapsed: float, message: str) -> None:
        reports.append((elapsed, message))

    resolved = await asyncio.wait_for(
        wait_for_resolution(question.pk, policy(max_hold=None, progress_interval=0.2), Caller(progress=progress)),
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
        wait_for_resolution(question.pk, policy(max_hold=None, progress_interval=600), Caller(progress=progress))
    )
    message = await asyncio.wait_for(first, 60)  # not after the 600 s interval
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
    listened: list[str] = []
    listen = asking.Wait._cancel_after_the_close

    async def noting(wait: asking.Wait) -> Any:
        listened.append(str(wait.channel))
        return await listen(wait)

    monkeypatch.setattr(asking.Wait, "_cancel_after_the_close", noting)
    question = await ask()
    waiting = asyncio.create_task(
        wait_for_resolution(
            question.pk, policy(), Caller(cancel_groups=("mcpcall.late",), cancel_after_close=cancel_after_close)
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
    waiting = asyncio.create_task(wait_for_resolution(question.pk, policy(), Caller(cancel_groups=("mcpcall.test",))))
    await asyncio.sleep(0.2)
    await get_channel_layer().group_send("mcpcall.test", {"type": "call.cancel", "reason": reason})
    returned = await asyncio.wait_for(waiting, 60)
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
        wait_for_resolution(
            question.pk, policy(), Caller(transport_cancel=lambda: "AbortError: This operation was aborted")
        )
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
    from questions.asking import slice_for

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
    # On the server's own database thread, as a person's answer is written; the wait re-reads every 50 ms.
    await core_db.database_sync_to_async(question.record_answer)("after ten slices", by_token=None)
    resolved = await asyncio.wait_for(waiting, 60)
    assert resolved.answer.text == "after ten slices"
    # One receive for all ten slices: cancelled at each, there would be one per slice. It may be cancelled once,
    # as the call ends, where a loaded machine's re-read found the answer before its wake-up arrived.
    assert len(started) == 1, (started, cancelled)
    assert cancelled in ([], started), (started, cancelled)


# --- ask_and_wait: the write and the wait together, without a server ------------------------------


def writer(text: str, **fields: Any) -> Callable[[uuid.UUID], tuple[Question, bool]]:
    token, _ = AgentToken.issue("agent-a")

    def write(new_id: uuid.UUID) -> tuple[Question, bool]:
        return Question.ask(asker=token, asker_name="agent-a", text=text, options=[], new_id=new_id, **fields)

    return write


async def test_a_call_cut_while_its_question_is_written_marks_it_as_left() -> None:
    write = await database_sync_to_async(writer)("Cut?")
    writing = asyncio.Event()
    loop = asyncio.get_running_loop()

    def slow_write(new_id: uuid.UUID) -> tuple[Question, bool]:
        loop.call_soon_threadsafe(writing.set)
        time.sleep(0.3)  # the row is still being written when the client goes away
        written: tuple[Question, bool] = write(new_id)
        return written

    call = asyncio.create_task(asking.ask_and_wait(slow_write, policy(), Caller(token_id=1)))
    await writing.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    stored = await database_sync_to_async(Question.objects.get)(text="Cut?")
    assert stored.status == Status.PENDING
    assert stored.agent_left
    assert stored.agent_left_reason == "the connection to the agent closed"
    assert not runtime.asks_in_flight, "nothing is left for a stopping worker to wait for"
    assert runtime.waiting_per_token[1] == 0, "the slot is given back"


async def test_a_cancel_routed_between_the_write_and_the_wait_ends_the_wait() -> None:
    # The TypeScript SDK cancels on Esc the moment the card shows, before the call has started to wait.
    write = await database_sync_to_async(writer)("Esc at once?")

    def write_then_cancel(new_id: uuid.UUID) -> tuple[Question, bool]:
        written: tuple[Question, bool] = write(new_id)
        message = {"type": "call.cancel", "reason": "User pressed Esc"}
        async_to_sync(get_channel_layer().group_send)("mcpcall.esc", message)
        return written

    cancelled: list[bool] = []
    caller = Caller(cancel_groups=("mcpcall.esc",), on_cancel=lambda: cancelled.append(True))
    asked = await asyncio.wait_for(asking.ask_and_wait(write_then_cancel, policy(slice_seconds=600), caller), 60)
    assert (asked.question.status, asked.question.cancel_reason) == (Status.CANCELLED, CancelReason.CLIENT_CANCELLED)
    assert cancelled == [True]


async def test_an_answer_given_the_moment_the_question_is_written_needs_no_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write = await database_sync_to_async(writer)("Answered at once?")
    reads: list[object] = []
    monkeypatch.setattr(asking, "_read", lambda question_id: reads.append(question_id))

    def write_then_answer(new_id: uuid.UUID) -> tuple[Question, bool]:
        written, reattached = write(new_id)
        written.record_answer("at once", by_token=None, by_name="bob")
        return written, reattached

    asked = await asyncio.wait_for(asking.ask_and_wait(write_then_answer, policy(slice_seconds=600), Caller()), 60)
    assert (asked.question.status, asked.question.answer.text, asked.reattached) == (Status.ANSWERED, "at once", False)
    assert reads == []


async def test_a_second_identical_ask_reattaches_and_waits_on_the_first_question() -> None:
    write = await database_sync_to_async(writer)("Same twice?")
    first = asyncio.create_task(asking.ask_and_wait(write, policy(), Caller()))
    await asyncio.sleep(0.3)
    second = asyncio.create_task(asking.ask_and_wait(write, policy(), Caller()))
    await asyncio.sleep(0.3)
    question = await database_sync_to_async(Question.objects.get)(text="Same twice?")
    await database_sync_to_async(question.record_answer)("once for both", by_token=None)
    one, two = await asyncio.wait_for(asyncio.gather(first, second), 60)
    assert (one.reattached, two.reattached) == (False, True)
    assert one.question.pk == two.question.pk == question.pk
    assert two.question.answer.text == "once for both"


async def test_past_the_tokens_limit_it_refuses_before_writing(settings: Any) -> None:
    settings.HOOKBRIDGE_MAX_WAITING_PER_TOKEN = 1
    write = await database_sync_to_async(writer)("One at a time?")
    first = asyncio.create_task(asking.ask_and_wait(write, policy(), Caller(token_id=9, slot_words="approvals")))
    await asyncio.sleep(0.3)
    with pytest.raises(OverLimit, match="HOOKBRIDGE_MAX_WAITING_PER_TOKEN") as refused:
        await asking.ask_and_wait(writer_never_called, policy(), Caller(token_id=9, slot_words="approvals"))
    assert "approvals" in str(refused.value)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first


def writer_never_called(new_id: uuid.UUID) -> tuple[Question, bool]:
    raise AssertionError("written past the limit")


async def test_a_caller_that_marks_its_own_leaving_is_told_instead_of_the_default() -> None:
    # An approval's host that closed its request has moved on: its adapter takes the card down.
    write = await database_sync_to_async(writer)("Host gone?")
    told: list[tuple[uuid.UUID, str]] = []

    async def left(question_id: uuid.UUID, why: str) -> None:
        told.append((question_id, why))

    call = asyncio.create_task(asking.ask_and_wait(write, policy(), Caller(left=left, closed="the host closed it")))
    await asyncio.sleep(0.3)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    stored = await database_sync_to_async(Question.objects.get)(text="Host gone?")
    assert told == [(stored.pk, "the host closed it")]
    assert not stored.agent_left, "the default mark is not made as well"


async def test_a_policy_may_depend_on_the_question_as_written() -> None:
    write = await database_sync_to_async(writer)("Held how long?")
    seen: list[str] = []

    def held(question: Question) -> WaitPolicy:
        seen.append(question.text)
        return policy(max_hold=0.2, leave_when_held_out=False)

    asked = await asyncio.wait_for(asking.ask_and_wait(write, held, Caller()), 60)
    assert seen == ["Held how long?"]
    assert asked.question.status == Status.PENDING


# --- Wait's own steps, one at a time ------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy_fields", "since_progress", "time_left", "expected"),
    [
        ({"slice_seconds": 2.0, "max_hold": None, "progress_interval": None}, None, None, 2.0),
        ({"slice_seconds": 2.0, "max_hold": 0.5, "progress_interval": None}, None, None, 0.5),
        ({"slice_seconds": 2.0, "max_hold": None, "progress_interval": 1.5}, 1.0, None, 0.5),
        ({"slice_seconds": 2.0, "max_hold": None, "progress_interval": None}, None, 0.3, 0.3),
        ({"slice_seconds": 2.0, "max_hold": None, "progress_interval": None}, None, -4.0, 0.01),
    ],
)
async def test_the_next_slice_ends_at_the_first_thing_due(
    policy_fields: dict[str, Any], since_progress: float | None, time_left: float | None, expected: float
) -> None:
    wait = asking.Wait(uuid.uuid4(), WaitPolicy(**policy_fields), Caller())
    if since_progress is not None:
        wait.last_progress = wait.loop.time() - since_progress
    wait.time_left = time_left
    assert wait.next_timeout() == pytest.approx(expected, abs=0.02)


async def test_a_wake_up_that_carries_the_answer_settles_the_wait_without_a_read() -> None:
    wait = asking.Wait(uuid.uuid4(), policy(), Caller())
    question = Question(pk=wait.question_id, status=Status.PENDING, text="?")
    carried = wake_up(Answer(text="yes", data={"answer": "yes"}, answered_by="bob", created_at=timezone.now()))
    message = await wait.on_message(carried, question)
    assert message is question
    assert (question.status, question.answer.text) == (Status.ANSWERED, "yes")


async def test_a_wake_up_without_its_answer_or_of_another_type_means_read_again() -> None:
    wait = asking.Wait(uuid.uuid4(), policy(), Caller())
    question = Question(pk=wait.question_id, status=Status.PENDING, text="?")
    assert await wait.on_message({"type": "question.resolved"}, question) is None
    assert await wait.on_message({"type": "question.resolved", "answered": {"text": 1}}, question) is None
    assert await wait.on_message({"type": "something.else"}, question) is None
    assert question.status == Status.PENDING


async def test_past_the_tokens_queued_asks_it_refuses_at_once_and_another_tokens_ask_queues(settings: Any) -> None:
    """Issue 37: asks faster than the database writes them queue no further than this, per token."""
    settings.HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN = 1
    release = threading.Event()
    blocked = await database_sync_to_async(writer)("Slow to write?")

    def slow_write(new_id: uuid.UUID) -> tuple[Question, bool]:
        release.wait(10)
        written: tuple[Question, bool] = blocked(new_id)
        return written

    first = asyncio.create_task(asking.ask_and_wait(slow_write, policy(), Caller(token_id=7)))
    try:
        await until(lambda: runtime.queued_asks_per_token[7] == 1)
        with pytest.raises(OverLimit, match="HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN=1"):
            await asking.ask_and_wait(writer_never_called, policy(), Caller(token_id=7))
        with asking.queued_slot(8):  # another token's ask is queued as usual
            assert runtime.queued_asks_per_token[8] == 1
    finally:
        release.set()
    # Written: its slot is free again, though the call still waits for a person.
    await until(lambda: runtime.queued_asks_per_token[7] == 0)
    assert not first.done()
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_re_asks_draw_on_the_tokens_asks_a_minute_like_new_questions(settings: Any) -> None:
    """Issue 37: a host re-asking at once, again and again, is turned away like one asking new questions."""
    # Bursts of 10, then one every 10 s: a slow machine's ten asks cannot earn the eleventh back.
    settings.HOOKBRIDGE_QUESTIONS_PER_MINUTE = 6
    write = await database_sync_to_async(writer)("Again and again?")
    calls = []
    for _ in range(10):  # the same question each time: re-asks after the first
        calls.append(asyncio.create_task(asking.ask_and_wait(write, policy(), Caller(token_id=5))))
        await asyncio.sleep(0.05)
    with pytest.raises(RateLimited, match=r"re-asks included \(HOOKBRIDGE_QUESTIONS_PER_MINUTE=6\)"):
        await asking.ask_and_wait(writer_never_called, policy(), Caller(token_id=5))
    # Another token's asks are its own.
    other = asyncio.create_task(asking.ask_and_wait(await database_sync_to_async(writer)("Mine?"), policy(),
                                                    Caller(token_id=6)))  # fmt: skip
    await asyncio.sleep(0.3)
    assert not other.done()
    assert await database_sync_to_async(Question.objects.filter(text="Again and again?").count)() == 1
    for call in [*calls, other]:
        call.cancel()
    await asyncio.gather(*calls, other, return_exceptions=True)
