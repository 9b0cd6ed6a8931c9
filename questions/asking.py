"""The blocking ask, one for every way of asking: write the question, hold the caller until it is resolved.

MCP tools (mcpapi) and Claude Code's approval hook (hosts) are adapters of it: each
describes its caller as a `Caller` (where its cancels arrive, where its progress goes, how
its leaving is marked) and passes a `write` that stores the question, then reads the
`Asked` it gets back in its own terms (a tool result, a hook's JSON answer).

The row is the truth and a channel-layer message only a wake-up hint:

1. a channel joins the new question's group (and the caller's cancel groups) under an id
   chosen before the write, so an answer or a cancel given at once waits there;
2. the question is written (or the caller's earlier identical one re-attached);
3. `Wait` waits on the layer in slices, re-reading the row after each one, so a lost
   message costs one slice, never an answer. A layer that fails (Redis restarting) is
   logged and waited out slice by slice on the row alone; the groups are joined again
   once it answers, since a restart forgets them.

No database connection and no thread is held between reads: a waiting call is one
coroutine parked on the channel layer.

A call that ends without an outcome is not a person saying no. When the client gives up
(its own timeout), goes away (a dropped connection) or the server stops, the question
stays answerable and the dashboards say the caller stopped waiting; the re-ask comes back
to it. Only an explicit abort at the agent (a cancel whose reason is not a timeout) takes it
off the dashboards; a caller may mark its leaving otherwise (`Caller.left`: an approval's
host that closed its request has moved on, so the card goes).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import anyio
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from core import layer_groups, limits, presence, runtime
from core.db import database_sync_to_async, on_the_read_thread
from core.formatting import duration
from core.limits import OverLimit, holding
from questions import runtime as waiting
from questions.models import Question, RateLimited, Status
from questions.wakeups import question_group, take_answer

# Why a call ended when the server itself stopped it: what a question's record says then.
SERVER_RESTARTED = "the server restarted"
logger = logging.getLogger(__name__)

ProgressReporter = Callable[[float, str], Awaitable[None]]
# Stores the question under the id given (or finds the caller's identical one): (question, re-attached).
Write = Callable[[uuid.UUID], tuple[Question, bool]]


@dataclass(frozen=True)
class WaitPolicy:
    slice_seconds: float
    max_hold: float | None  # None: hold as long as it takes (progress keeps the call alive)
    progress_interval: float | None  # None: the caller asked for no progress
    # Whether a hold that runs out marks the question as left (its re-attach window starts). An approval
    # does not: its endpoint answers "no decision" then and times the question out itself.
    leave_when_held_out: bool = True

    @classmethod
    def from_settings(cls, *, with_progress: bool) -> WaitPolicy:
        return cls(
            slice_seconds=settings.HOOKBRIDGE_WAIT_SLICE,
            max_hold=None if with_progress else settings.HOOKBRIDGE_MAX_HOLD,
            progress_interval=settings.HOOKBRIDGE_PROGRESS_INTERVAL if with_progress else None,
        )


@dataclass(frozen=True)
class Caller:
    """Who waits, as its adapter knows them: where their cancels arrive, where progress goes, how they leave.

    `token_id`: the token whose HOOKBRIDGE_MAX_WAITING_PER_TOKEN slots the call takes (None: stdio, one
    client per process); `slot_words` names what is counted in the error past the limit.
    `cancel_groups`: groups a client's `call.cancel` is routed to (mcpapi.calls); `on_cancel` is told
    when one ends the wait, so that the call is not answered.
    `transport_cancel`: the reason of a cancel the transport applied itself (stdio), None for a plain cut.
    `cancel_after_close`: whether a cancel may still be routed just after the connection closed (the
    handshake era's Esc); on 2026-07-28 the close is the cancel, and nothing follows.
    `left`: marks the question when the caller goes away (default: the agent stopped waiting, the question
    stays answerable); `closed` is what the dashboards are told then.
    """

    token_id: int | None = None
    slot_words: str = "calls waiting for a person with this token"
    cancel_groups: tuple[str, ...] = ()
    on_cancel: Callable[[], None] | None = None
    transport_cancel: Callable[[], str | None] | None = None
    cancel_after_close: bool = True
    progress: ProgressReporter | None = None
    left: Callable[[uuid.UUID, str], Awaitable[None]] | None = None
    closed: str = "the connection to the agent closed"


@dataclass(frozen=True)
class Asked:
    """How an ask ended: the question as last read (still pending: the hold ran out, or the client gave up)."""

    question: Question
    reattached: bool


def waiting_slot(token_id: int, *, what: str) -> AbstractContextManager[None]:
    """One of the token's HOOKBRIDGE_MAX_WAITING_PER_TOKEN waiting calls in this process, taken before anything
    is written; raises OverLimit naming the setting. Every way of asking counts.
    """
    return holding(
        waiting.waiting_per_token,
        token_id,
        limit=settings.HOOKBRIDGE_MAX_WAITING_PER_TOKEN,
        what=what,
        setting="HOOKBRIDGE_MAX_WAITING_PER_TOKEN",
    )


def slice_for(base: float, waiting: int, rereads_per_second: float) -> float:
    """How long one wait on the layer lasts with `waiting` calls waiting in this process.

    Each call re-reads its row once a slice; with thousands waiting, those reads alone
    filled the one thread the ORM runs on, and an answer's wake-up queued behind them for
    seconds (bench/: 2,000 held calls). So the slice grows with the crowd, keeping re-reads
    near a budget per second; a lost wake-up (rare: Redis restarting) then costs a longer
    slice, never the answer.
    """
    return max(base, waiting / rereads_per_second)


# How clients word a cancel that means "I gave up waiting": the TypeScript SDK's
# "McpError: MCP error -32001: Request timed out", the Python SDK's "timed out after 60s".
_GAVE_UP = re.compile(r"time[sd]?[\s_-]*out|timeout|deadline", re.IGNORECASE)


def gave_up(reason: str) -> bool:
    """Whether a client's cancel reason says it timed out, rather than that someone aborted the call."""
    return bool(_GAVE_UP.search(reason))


# An Esc on a handshake-era connection sends notifications/cancelled and closes the stream at
# the same moment. The close can win: the call ends as a plain disconnect and the cancel, routed
# a moment later, finds nobody. So a call whose connection closed listens this long for it.
CANCEL_AFTER_CLOSE = 0.5


# --- the writes a wait makes, each one trip to the database thread ---------------------------


@on_the_read_thread
def _read(question_id: uuid.UUID) -> Question:
    return Question.objects.select_related("answer").get(pk=question_id)


@database_sync_to_async
def _time_out(question: Question) -> None:
    question.time_out()


@database_sync_to_async
def _abort(question_id: uuid.UUID, why: str) -> None:
    Question(pk=question_id).abort(why)


@database_sync_to_async
def _waiting_again(question: Question) -> None:
    question.agent_waiting_again()


async def _stopped_waiting(question_id: uuid.UUID, why: str) -> None:
    """Mark the question as left, in a batch with every other call that ended meanwhile.

    2,000 agents hanging up at once (a host restarting, a network blip) took one
    transaction and one dashboard push each, 12-19 s in all; now the calls cut in the
    same moment are marked by one UPDATE per reason, in one trip to the database thread.
    """
    await runtime.batch("leavers", _mark_leavers).add((question_id, why))


async def _mark_leavers(leavers: list[tuple[uuid.UUID, str]]) -> list[None]:
    by_reason: dict[str, list[uuid.UUID]] = {}
    for question_id, why in leavers:
        by_reason.setdefault(why, []).append(question_id)
    await database_sync_to_async(_mark_left)(by_reason)
    return [None] * len(leavers)


def _mark_left(by_reason: dict[str, list[uuid.UUID]]) -> None:
    for why, question_ids in by_reason.items():
        Question.agents_stopped_waiting(question_ids, why)


async def _client_ended_the_call(question_id: uuid.UUID, reason: str) -> None:
    """A cancel the client sent: a timeout leaves the question answerable, anything else aborts it."""
    if not gave_up(reason):
        logger.info("Question %s aborted at the agent (%s)", question_id, reason)
        await _abort(question_id, f"aborted at the agent: {reason}" if reason else "aborted at the agent")
    else:
        logger.info("The agent stopped waiting on question %s (%s)", question_id, reason)
        await _stopped_waiting(question_id, f"the client gave up waiting: {reason}")


async def _caller_left(caller: Caller, question_id: uuid.UUID, why: str) -> None:
    if caller.left is not None:
        await caller.left(question_id, why)
    else:
        await _stopped_waiting(question_id, why)


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.debug("A receive ended after its call with %r", future.exception())


class Wait:
    """One call's wait on one question: join its groups, read the row, wait a slice, act on what came.

    `channel`: one the caller made and put in the question's group (and its cancel groups) before the
    question was written, so a cancel or an answer sent between the write and the wait waits there.
    `written`: the question as this call has just written it, with `channel` in its group from before
    the write, so any answer since has a wake-up waiting and the first read is not needed (with a
    hundred new calls a second, those reads were a tenth of a worker's time: bench/agents.py).
    """

    def __init__(
        self,
        question_id: uuid.UUID,
        policy: WaitPolicy,
        caller: Caller,
        *,
        channel: str | None = None,
        written: Question | None = None,
    ) -> None:
        self.question_id, self.policy, self.caller = question_id, policy, caller
        self.channel, self.written = channel, written
        self.groups = (question_group(question_id), *caller.cancel_groups)
        self.layer = get_channel_layer()
        self.loop = asyncio.get_running_loop()
        self.started = self.loop.time()
        self.joined = False
        self.woken = True  # the first read needs no wake-up
        self.receiving: asyncio.Future[dict[str, Any]] | None = None
        self.last_progress: float | None = None  # the first report goes out at once
        self.time_left: float | None = None  # until the question's own timeout, as of the last read
        self.where: str | None = None  # the question's address, for the progress messages

    async def run(self) -> Question:
        """Wait until the question leaves `pending`, the hold runs out or the client gives up; the row as last read."""
        # Counted before the first await: a worker stopping from here on marks the question as left.
        waiting.waiting_now += 1
        waiting.waiting_on[self.question_id] += 1
        try:
            self.joined = await self.join()
            while True:
                question = await self.read()
                if question.status != Status.PENDING:
                    return question
                if await self.timed_out(question):
                    continue  # re-read: an answer may have won the race
                if self.policy.max_hold is not None and self.waited() >= self.policy.max_hold:
                    return await self.held_out(question)
                await self.report()
                message = await self.receive(self.next_timeout())
                if message is not None and (settled := await self.on_message(message, question)) is not None:
                    return settled
        except BaseException as exc:
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                # The SDK cancels the handler when the client goes away (or the server stops).
                # The scope is cancelled, so the clean-up must be shielded to run at all.
                with anyio.CancelScope(shield=True):
                    await self.on_cut()
            raise
        finally:
            await self.close()

    async def join(self) -> bool:
        """Put the call's channel in its groups; False when the layer is down (the wait goes on re-reading)."""
        try:
            if self.channel is None:
                self.channel = await self.layer.new_channel("hookbridge.wait")
            for group in self.groups:
                await self.layer.group_add(group, self.channel)
        except Exception:
            logger.warning(
                "Channel layer unavailable; question %s falls back to re-reading", self.question_id, exc_info=True
            )
            return False
        return True

    async def read(self) -> Question:
        """The row: as just written (first time round), else read; marks a call that waits again on a left question."""
        if self.written is not None:
            question, self.written = self.written, None
        else:
            question = await _read(self.question_id)
        if question.status != Status.PENDING:
            if not self.woken:
                # The row changed and no message said so: a lost wake-up, paid for with a slice.
                logger.info("Question %s resolved without a wake-up; found by re-reading", self.question_id)
            return question
        if question.agent_left_at is not None:
            # Marked as left by an earlier call (or another call on the same question): this one waits.
            await _waiting_again(question)
        self.woken = False
        return question

    def waited(self) -> float:
        return self.loop.time() - self.started

    async def timed_out(self, question: Question) -> bool:
        """Whether the question's own timeout (fixed when it was asked) has passed; it is timed out if so."""
        self.time_left = None
        if question.timeout_seconds is None:
            return False
        self.time_left = question.timeout_seconds - (timezone.now() - question.created_at).total_seconds()
        if self.time_left > 0:
            return False
        await _time_out(question)
        return True

    async def held_out(self, question: Question) -> Question:
        if self.policy.leave_when_held_out:
            # The call ends with "still pending": nobody waits on the question until the agent asks again.
            why = f"the server's hold limit ran out after {duration(self.waited())}"
            await _stopped_waiting(self.question_id, why)
        return question

    async def report(self) -> None:
        """A progress report when one is due: at once, then one per interval."""
        progress, interval = self.caller.progress, self.policy.progress_interval
        if progress is None or interval is None:
            return
        now = self.loop.time()
        if self.where is None:
            self.where = f"{presence.public_url()}/questions/{self.question_id}/"
        where = self.where
        if self.last_progress is None:
            self.last_progress = now
            await progress(0.0, f"Waiting for a person: the question is on the dashboard at {where}")
        elif now - self.last_progress >= interval:
            self.last_progress = now
            waited = now - self.started
            await progress(waited, f"Waiting for a person, {duration(waited)} so far: {where}")

    def next_timeout(self) -> float:
        """How long the next slice lasts: until a re-read is due, the hold ends, a report or the question's timeout."""
        now = self.loop.time()
        timeout = slice_for(self.policy.slice_seconds, waiting.waiting_now, settings.HOOKBRIDGE_REREADS_PER_SECOND)
        if self.policy.max_hold is not None:
            timeout = min(timeout, self.policy.max_hold - (now - self.started))
        if self.policy.progress_interval is not None and self.last_progress is not None:
            timeout = min(timeout, self.policy.progress_interval - (now - self.last_progress))
        if self.time_left is not None:
            timeout = min(timeout, self.time_left)
        return max(timeout, 0.01)

    async def receive(self, timeout: float) -> dict[str, Any] | None:
        """The next message on the call's channel within `timeout`; None when the slice passed without one."""
        if not self.joined:
            # Groups do not survive a Redis restart: join again once the layer answers.
            self.joined = await self.join()
        if not self.joined:
            await asyncio.sleep(timeout)
            return None
        assert self.channel is not None
        if self.receiving is None:
            self.receiving = asyncio.ensure_future(self.layer.receive(self.channel))
        # Waited on, not cancelled, at the end of a slice: the same receive carries over
        # to the next one. channels_redis loses the message of a receive cancelled as it
        # arrives (and a cancelled receive can hold up the others): wake-ups went missing
        # and, once in 5,000 calls, a call waited for good on an answer already given.
        done, _ = await asyncio.wait({self.receiving}, timeout=timeout)
        if not done:
            return None
        finished, self.receiving = self.receiving, None
        try:
            message: dict[str, Any] = finished.result()
        except Exception:
            logger.warning("Channel layer failed while waiting on question %s", self.question_id, exc_info=True)
            self.joined = False
            await asyncio.sleep(timeout)
            return None
        logger.debug("wake-up %s for question %s", message.get("type"), self.question_id)
        self.woken = True
        return message

    async def on_message(self, message: dict[str, Any], question: Question) -> Question | None:
        """The question, when the message settles the wait; None: read the row again."""
        answered = message.get("answered")
        if message.get("type") == "question.resolved" and isinstance(answered, dict):
            # The answer came with its wake-up, as committed (questions.wakeups.wake_up): no read.
            try:
                take_answer(question, answered)
            except (KeyError, TypeError, ValueError):
                logger.warning("A wake-up for question %s carried an unreadable answer", self.question_id)
            else:
                return question
        if message.get("type") == "call.cancel":
            return await self.on_cancel(str(message.get("reason") or ""))
        return None

    async def on_cancel(self, reason: str) -> Question | None:
        """A client's cancel routed to this call: given up, the call ends and the question stays; aborted, re-read."""
        if self.caller.on_cancel is not None:
            self.caller.on_cancel()
        # Shielded: an Esc closes the stream right behind its cancel, and a cancelled hop
        # to the database thread never runs, so the abort was lost now and then.
        with anyio.CancelScope(shield=True):
            await _client_ended_the_call(self.question_id, reason)
        question = await _read(self.question_id)
        return question if question.status == Status.PENDING else None

    async def on_cut(self) -> None:
        """The call was cancelled under the wait: the server stopping, a cancel the transport applied, a close."""
        if waiting.shutting_down.is_set():
            logger.info("Server stopping while question %s waits; it stays for the re-ask", self.question_id)
            if self.caller.left is not None or self.question_id not in waiting.marked_on_shutdown:
                # else marked with the others, in one UPDATE
                await _caller_left(self.caller, self.question_id, SERVER_RESTARTED)
            return
        transport = self.caller.transport_cancel
        if (reason := transport() if transport is not None else None) is not None:
            await _client_ended_the_call(self.question_id, reason)
            return
        listens = self.caller.cancel_after_close and self.caller.cancel_groups and self.channel is not None
        if listens and (routed := await self._cancel_after_the_close()) is not None:
            await _client_ended_the_call(self.question_id, routed)
            return
        logger.info("%s while waiting on question %s", self.caller.closed.capitalize(), self.question_id)
        await _caller_left(self.caller, self.question_id, self.caller.closed)

    async def _cancel_after_the_close(self) -> str | None:
        """The reason of a cancel routed to this call within CANCEL_AFTER_CLOSE of the close, if one comes."""
        assert self.channel is not None
        deadline = self.loop.time() + CANCEL_AFTER_CLOSE
        while (left := deadline - self.loop.time()) > 0:
            if self.receiving is None:
                self.receiving = asyncio.ensure_future(self.layer.receive(self.channel))
            done, _ = await asyncio.wait({self.receiving}, timeout=left)
            if not done:
                break
            finished, self.receiving = self.receiving, None
            if finished.exception() is not None:
                break
            message = finished.result()
            if message.get("type") == "call.cancel":
                return str(message.get("reason") or "")
        return None

    async def close(self) -> None:
        waiting.waiting_now -= 1
        waiting.waiting_on[self.question_id] -= 1
        if waiting.waiting_on[self.question_id] <= 0:
            del waiting.waiting_on[self.question_id]
        if self.receiving is not None:
            # Not awaited: the call is over, and its answer was read from the row.
            self.receiving.cancel()
            self.receiving.add_done_callback(_retrieve)
        if self.channel is not None:
            await layer_groups.leave(self.groups, self.channel)


# --- a worker stopping ---------------------------------------------------------------------------


def stopping() -> list[uuid.UUID]:
    """From now on calls end for the shutdown (each leaves its question for the re-ask); those waited on now.

    Called as the server starts going down, before its calls are cut: they then see the flag,
    and find their questions already counted for mark_left_on_the_way_down.
    """
    waiting.shutting_down.set()
    waited_on = list(waiting.waiting_on)
    waiting.marked_on_shutdown.update(waited_on)
    return waited_on


async def mark_left_on_the_way_down(waited_on: list[uuid.UUID]) -> None:
    """Mark the questions waited on here, and those still being written, as left: in one UPDATE.

    2,000 held calls would be 2,000 transactions one by one, and not every call is cancelled on
    the way down (daphne cuts the 2026-07-28 era's, and nobody awaits their handlers).
    """
    writes = list(waiting.asks_in_flight)
    if writes:
        await asyncio.wait(writes, timeout=3)
        written = [w.result()[0].pk for w in writes if w.done() and not w.cancelled() and not w.exception()]
        waiting.marked_on_shutdown.update(written)
        waited_on = [*waited_on, *written]
    if waited_on:
        marked = await database_sync_to_async(Question.agents_stopped_waiting)(waited_on, SERVER_RESTARTED)
        logger.info("Marked %d questions as left for the re-ask: the server is stopping", marked)


async def wait_for_resolution(
    question_id: uuid.UUID,
    policy: WaitPolicy,
    caller: Caller | None = None,
    *,
    channel: str | None = None,
    written: Question | None = None,
) -> Question:
    """Wait on a question that exists already (wait_for_answer, a re-ask); see `Wait`."""
    return await Wait(question_id, policy, caller or Caller(), channel=channel, written=written).run()


async def ask_and_wait(
    write: Write,
    policy: WaitPolicy | Callable[[Question], WaitPolicy],
    caller: Caller,
    *,
    on_written: Callable[[Question, bool], Awaitable[None]] | None = None,
) -> Asked:
    """Write the question (or re-attach the caller's identical one), then wait until it is resolved.

    A slot of the caller's token is taken first (OverLimit past HOOKBRIDGE_MAX_WAITING_PER_TOKEN);
    `write` runs on the database thread and may raise (RateLimited). `on_written` is told at once
    (a note to the agent, a browser opened) before the wait begins. `policy` may depend on the question
    as written (an approval re-attached by a second caller is held until its own time is up).
    """
    if caller.token_id is None:  # stdio: one client per process
        return await _ask_and_wait(write, policy, caller, on_written)
    ask_allowance(caller.token_id)
    with waiting_slot(caller.token_id, what=caller.slot_words):
        return await _ask_and_wait(write, policy, caller, on_written)


def ask_allowance(token_id: int) -> None:
    """One of the token's asks here, a re-ask as much as a new question: RateLimited past
    HOOKBRIDGE_QUESTIONS_PER_MINUTE (in bursts of a sixth), before anything is written or waited on.

    New questions are also counted in the database, across workers (Question.ask); re-asks only here: a host
    that re-asks at once, again and again, would otherwise keep the database thread every other token needs.
    """
    per_minute = settings.HOOKBRIDGE_QUESTIONS_PER_MINUTE
    if not per_minute:
        return
    wait = limits.take(waiting.asks_per_token, token_id, per_minute=per_minute, burst=max(10, per_minute // 6))
    if wait:
        raise RateLimited(
            f"rate limit: at most {per_minute} asks a minute per token, re-asks included "
            f"(HOOKBRIDGE_QUESTIONS_PER_MINUTE={per_minute}); try again in {wait:.1f} s"
        )


def asks_spent(token_id: int) -> float:
    """Seconds until the token may ask again (0.0: now), taking nothing: for the HTTP edge's 429."""
    per_minute = settings.HOOKBRIDGE_QUESTIONS_PER_MINUTE
    if not per_minute:
        return 0.0
    return limits.spent(waiting.asks_per_token, token_id, per_minute=per_minute)


def asks_queued_full(token_id: int) -> bool:
    """Whether the token has HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN asks waiting to be written here already."""
    return waiting.queued_asks_per_token[token_id] >= settings.HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN


def worker_queue_full() -> bool:
    """Whether this worker has HOOKBRIDGE_QUEUED_ASKS asks waiting to be written, of all its tokens together.

    The per-token cap keeps one token from queueing everyone's asks behind its own; this one bounds the sum, so
    many tokens at once cannot make a new ask wait minutes in silence for its row: past it, an ask is refused at
    once (on /mcp a 503 with Retry-After), and its agent asks again.
    """
    return sum(waiting.queued_asks_per_token.values()) >= settings.HOOKBRIDGE_QUEUED_ASKS


WORKER_QUEUE_FULL = (
    "this server is busy: {count} questions are waiting to be written here, the most one server process queues "
    "(HOOKBRIDGE_QUEUED_ASKS={limit}); ask again in a moment"
)


def queued_slot(token_id: int | None) -> AbstractContextManager[None]:
    """One of the token's HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN asks waiting for the database to write them.

    Asks come faster than one worker writes them (about 60 a second on SQLite): past this many queued for
    one token, its next is refused at once, naming the setting, instead of queueing everyone's asks behind its
    own for seconds. Other tokens' asks keep going through.
    """
    if worker_queue_full():
        limit = settings.HOOKBRIDGE_QUEUED_ASKS
        raise OverLimit(WORKER_QUEUE_FULL.format(count=limit, limit=limit))
    if token_id is None:
        return contextlib.nullcontext()
    return holding(
        waiting.queued_asks_per_token,
        token_id,
        limit=settings.HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN,
        what="asks waiting to be written",
        setting="HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN",
    )


async def _ask_and_wait(
    write: Write,
    policy: WaitPolicy | Callable[[Question], WaitPolicy],
    caller: Caller,
    on_written: Callable[[Question, bool], Awaitable[None]] | None,
) -> Asked:
    new_id = uuid.uuid4()
    channel = await _listen(caller, new_id)
    try:
        queued = queued_slot(caller.token_id)
        queued.__enter__()
    except BaseException:
        if channel is not None:
            await layer_groups.leave((question_group(new_id), *caller.cancel_groups), channel)
        raise
    writing = asyncio.ensure_future(database_sync_to_async(write)(new_id))
    # Counted until written, however the call ends meanwhile.
    writing.add_done_callback(lambda _: queued.__exit__(None, None, None))
    waiting.asks_in_flight.add(writing)
    try:
        question, reattached = await asyncio.shield(writing)
        if on_written is not None:
            await on_written(question, reattached)
    except asyncio.CancelledError:
        await _left_behind(writing, caller)
        if channel is not None:
            await layer_groups.leave((question_group(new_id), *caller.cancel_groups), channel)
        raise
    except BaseException:
        waiting.asks_in_flight.discard(writing)
        if channel is not None:
            await layer_groups.leave((question_group(new_id), *caller.cancel_groups), channel)
        raise
    just_written = channel is not None and question.pk == new_id
    if channel is not None and not just_written:
        # Re-attached: the wait joins that question's group and reads its row.
        await layer_groups.leave([question_group(new_id)], channel)
    # No await between these two: from here the wait counts the question (waiting.waiting_on).
    waiting.asks_in_flight.discard(writing)
    holding = policy if isinstance(policy, WaitPolicy) else policy(question)
    final = await Wait(question.pk, holding, caller, channel=channel, written=question if just_written else None).run()
    return Asked(final, reattached)


async def _listen(caller: Caller, new_id: uuid.UUID) -> str | None:
    """A channel in the new question's group and the caller's cancel groups, joined before the write.

    A client may cancel the moment the question is visible (the TypeScript SDK on Esc), and a
    person may answer it at once: the cancel or the wake-up then waits in this channel for the wait.
    """
    layer = get_channel_layer()
    try:
        channel: str = await layer.new_channel("hookbridge.wait")
        for group in (*caller.cancel_groups, question_group(new_id)):
            await layer.group_add(group, channel)
    except Exception:
        logger.warning("Channel layer unavailable: question %s is joined to its groups when it waits", new_id)
        return None
    return channel


async def _left_behind(writing: asyncio.Future[tuple[Question, bool]], caller: Caller) -> None:
    """A call cut (client gone, worker stopping) after its question was written and before it waited.

    The question exists and nobody waits on it: marked as left, like one whose wait was cut.
    """
    with anyio.CancelScope(shield=True):
        try:
            written, _ = await writing
        except Exception:
            return  # nothing was written
        finally:
            waiting.asks_in_flight.discard(writing)
        why = SERVER_RESTARTED if waiting.shutting_down.is_set() else caller.closed
        if caller.left is not None:
            await caller.left(written.pk, why)
        else:
            await database_sync_to_async(written.agent_stopped_waiting)(why)
