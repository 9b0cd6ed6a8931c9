"""The blocking wait: hold a tool call until its question is resolved.

The row is the truth and a channel-layer message only a wake-up hint:

1. the caller has already written and committed the question;
2. we join the question's group first, then read the row (the answer may be
   there already);
3. we wait on the layer in slices, re-reading the row after each one, so a lost
   message costs one slice, never an answer. A layer that fails (Redis
   restarting) is logged and waited out slice by slice on the row alone; the
   groups are joined again once it answers, since a restart forgets them.

No database connection and no thread is held between reads: a waiting call is
one coroutine parked on the channel layer.

A call that ends without an outcome is not a person saying no. When the client
gives up (its own timeout), goes away (a dropped connection) or the server stops,
the question stays answerable and the dashboards say the agent stopped waiting;
the agent's re-ask comes back to it. Only an explicit abort at the agent (a cancel
whose reason is not a timeout) takes it off the dashboards.
"""

from __future__ import annotations

import asyncio
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

from hookbridge_site import layer_groups, presence, runtime
from hookbridge_site.db import database_sync_to_async, on_the_read_thread
from hookbridge_site.formatting import duration
from hookbridge_site.limits import holding
from questions.models import Question, Status, question_group

logger = logging.getLogger(__name__)

ProgressReporter = Callable[[float, str], Awaitable[None]]


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


def waiting_slot(token_id: int, *, what: str) -> AbstractContextManager[None]:
    """One of the token's HOOKBRIDGE_MAX_WAITING_PER_TOKEN waiting calls in this process, taken before anything
    is written; raises OverLimit naming the setting. Every way of asking (MCP tools, Claude Code's approvals) counts.
    """
    return holding(
        runtime.waiting_per_token,
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


@on_the_read_thread
def _read(question_id: uuid.UUID) -> Question:
    return Question.objects.select_related("answer").get(pk=question_id)


@database_sync_to_async
def _time_out(question: Question) -> None:
    question.time_out()


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


@database_sync_to_async
def _abort(question_id: uuid.UUID, why: str) -> None:
    Question(pk=question_id).abort(why)


@database_sync_to_async
def _waiting_again(question: Question) -> None:
    question.agent_waiting_again()


# How clients word a cancel that means "I gave up waiting": the TypeScript SDK's
# "McpError: MCP error -32001: Request timed out", the Python SDK's "timed out after 60s".
_GAVE_UP = re.compile(r"time[sd]?[\s_-]*out|timeout|deadline", re.IGNORECASE)


def gave_up(reason: str) -> bool:
    """Whether a client's cancel reason says it timed out, rather than that someone aborted the call."""
    return bool(_GAVE_UP.search(reason))


async def _client_ended_the_call(question_id: uuid.UUID, reason: str) -> None:
    """A cancel the client sent: a timeout leaves the question answerable, anything else aborts it."""
    if not gave_up(reason):
        logger.info("Question %s aborted at the agent (%s)", question_id, reason)
        await _abort(question_id, f"aborted at the agent: {reason}" if reason else "aborted at the agent")
    else:
        logger.info("The agent stopped waiting on question %s (%s)", question_id, reason)
        await _stopped_waiting(question_id, f"the client gave up waiting: {reason}")


def _where(question_id: uuid.UUID) -> str:
    return f"{presence.public_url()}/questions/{question_id}/"


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.debug("A receive ended after its call with %r", future.exception())


# An Esc on a handshake-era connection sends notifications/cancelled and closes the stream at
# the same moment. The close can win: the call ends as a plain disconnect and the cancel, routed
# a moment later, finds nobody. So a call whose connection closed listens this long for it.
CANCEL_AFTER_CLOSE = 0.5


async def _cancel_after_the_close(
    layer: Any, channel: str, receiving: asyncio.Future[dict[str, Any]] | None
) -> tuple[str | None, asyncio.Future[dict[str, Any]] | None]:
    """The reason of a cancel routed to this call within CANCEL_AFTER_CLOSE, and the receive still open."""
    deadline = asyncio.get_running_loop().time() + CANCEL_AFTER_CLOSE
    while (left := deadline - asyncio.get_running_loop().time()) > 0:
        if receiving is None:
            receiving = asyncio.ensure_future(layer.receive(channel))
        done, _ = await asyncio.wait({receiving}, timeout=left)
        if not done:
            break
        finished, receiving = receiving, None
        if finished.exception() is not None:
            break
        message = finished.result()
        if message.get("type") == "call.cancel":
            return str(message.get("reason") or ""), None
    return None, receiving


async def wait_for_resolution(
    question_id: uuid.UUID,
    policy: WaitPolicy,
    *,
    progress: ProgressReporter | None = None,
    extra_groups: tuple[str, ...] = (),
    cancel_reason: Callable[[], str | None] | None = None,
    channel: str | None = None,
    cancel_after_close: bool = True,
    on_client_cancel: Callable[[], None] | None = None,
    written: Question | None = None,
) -> Question:
    """Wait until the question leaves `pending`, or the hold limit is reached.

    Returns the question as last read: still pending means the hold ran out, or
    the client gave up. With `progress`, the first report goes out as soon as the
    question is known to be pending, then one per interval.

    A `call.cancel` message on one of `extra_groups` (a client's cancel, routed to
    this call) ends the wait: its `reason` decides between giving up and aborting.
    A cancelled caller (the client went away, or the server is stopping) leaves the
    question answerable and marked; `cancel_reason` tells a cancel that the transport
    applied itself (stdio) from a plain disconnect.

    `channel`: one the caller made, and put in `extra_groups`, before it wrote the question, so a
    cancel sent between the write and this wait waits there instead of being lost.

    `cancel_after_close`: whether a cancel may still be routed here just after the connection
    closed (the handshake era's Esc); on 2026-07-28 the close is the cancel, and nothing follows.

    `on_client_cancel`: told when a client's cancel ends the wait, so that the call is not answered.

    `written`: the question as this call has just written it, with `channel` in its group from
    before the write, so any answer since has a wake-up waiting: the first read is not needed.
    With a hundred new calls a second, those reads were a tenth of a worker's time (bench/agents.py).
    """
    layer = get_channel_layer()
    groups = (question_group(question_id), *extra_groups)

    async def join() -> bool:
        nonlocal channel
        try:
            if channel is None:
                channel = await layer.new_channel("hookbridge.wait")
            for group in groups:
                await layer.group_add(group, channel)
        except Exception:
            # The layer is down (Redis restarting): keep waiting on the row alone.
            logger.warning(
                "Channel layer unavailable; question %s falls back to re-reading", question_id, exc_info=True
            )
            return False
        return True

    # Counted before the first await: a worker stopping from here on marks the question as left.
    runtime.waiting_now += 1
    runtime.waiting_on[question_id] += 1
    receiving: asyncio.Future[dict[str, Any]] | None = None
    loop = asyncio.get_running_loop()
    started = loop.time()
    last_progress: float | None = None  # the first report goes out at once
    question: Question | None = None
    where: str | None = None  # the question's address, for the progress messages
    woken = True  # the first read needs no wake-up
    try:
        joined = await join()
        while True:
            if written is not None:
                question, written = written, None
            else:
                question = await _read(question_id)
            if question.status != Status.PENDING:
                if not woken:
                    # The row changed and no message said so: a lost wake-up, paid for with a slice.
                    logger.info("Question %s resolved without a wake-up; found by re-reading", question_id)
                return question
            if question.agent_left_at is not None:
                # Marked as left by an earlier call (or another call on the same question): this one waits.
                await _waiting_again(question)
            woken = False
            now = loop.time()
            waited = now - started
            # The question's own timeout, fixed when it was asked (server or tool-set default).
            time_left = None
            if question.timeout_seconds is not None:
                time_left = question.timeout_seconds - (timezone.now() - question.created_at).total_seconds()
                if time_left <= 0:
                    await _time_out(question)
                    continue  # re-read: an answer may have won the race
            if policy.max_hold is not None and waited >= policy.max_hold:
                if policy.leave_when_held_out:
                    # The call ends with "still pending": nobody waits on the question until the agent asks again.
                    await _stopped_waiting(question_id, f"the server's hold limit ran out after {duration(waited)}")
                return question

            if progress is not None and policy.progress_interval is not None:
                if where is None:
                    where = _where(question_id)
                if last_progress is None:
                    last_progress = now
                    await progress(0.0, f"Waiting for a person: the question is on the dashboard at {where}")
                elif now - last_progress >= policy.progress_interval:
                    last_progress = now
                    await progress(waited, f"Waiting for a person, {duration(waited)} so far: {where}")

            timeout = slice_for(policy.slice_seconds, runtime.waiting_now, settings.HOOKBRIDGE_REREADS_PER_SECOND)
            if policy.max_hold is not None:
                timeout = min(timeout, policy.max_hold - waited)
            if policy.progress_interval is not None and last_progress is not None:
                timeout = min(timeout, policy.progress_interval - (now - last_progress))
            if time_left is not None:
                timeout = min(timeout, time_left)
            if not joined:
                # Groups do not survive a Redis restart: join again once the layer answers.
                joined = await join()
            if not joined:
                await asyncio.sleep(max(timeout, 0.01))
                continue
            assert channel is not None
            if receiving is None:
                receiving = asyncio.ensure_future(layer.receive(channel))
            # Waited on, not cancelled, at the end of a slice: the same receive carries over
            # to the next one. channels_redis loses the message of a receive cancelled as it
            # arrives (and a cancelled receive can hold up the others): wake-ups went missing
            # and, once in 5,000 calls, a call waited for good on an answer already given.
            done, _ = await asyncio.wait({receiving}, timeout=max(timeout, 0.01))
            if not done:
                continue
            finished, receiving = receiving, None
            try:
                message = finished.result()
            except Exception:
                logger.warning("Channel layer failed while waiting on question %s", question_id, exc_info=True)
                joined = False
                await asyncio.sleep(max(timeout, 0.01))
                continue
            logger.debug("wake-up %s for question %s", message.get("type"), question_id)
            woken = True
            answered = message.get("answered")
            if message.get("type") == "question.resolved" and isinstance(answered, dict):
                # The answer came with its wake-up, as committed (Question.wake_up): no read.
                try:
                    question.take_answer(answered)
                except (KeyError, TypeError, ValueError):
                    logger.warning("A wake-up for question %s carried an unreadable answer", question_id)
                else:
                    return question
            if message.get("type") == "call.cancel":
                if on_client_cancel is not None:
                    on_client_cancel()
                # Shielded: an Esc closes the stream right behind its cancel, and a cancelled hop
                # to the database thread never runs, so the abort was lost now and then.
                with anyio.CancelScope(shield=True):
                    await _client_ended_the_call(question_id, str(message.get("reason") or ""))
                question = await _read(question_id)
                # Given up: the call ends, the question stays. Aborted: re-read, it is cancelled.
                if question.status == Status.PENDING:
                    return question
    except BaseException as exc:
        if isinstance(exc, anyio.get_cancelled_exc_class()):
            # The SDK cancels the handler when the client goes away (or the server stops).
            # The scope is cancelled, so the clean-up must be shielded to run at all.
            with anyio.CancelScope(shield=True):
                if runtime.shutting_down.is_set():
                    logger.info("Server stopping while question %s waits; it stays for the re-ask", question_id)
                    if question_id not in runtime.marked_on_shutdown:  # else marked with the others, in one UPDATE
                        await _stopped_waiting(question_id, "the server restarted")
                elif (reason := cancel_reason() if cancel_reason else None) is not None:
                    await _client_ended_the_call(question_id, reason)
                else:
                    routed = None
                    if cancel_after_close and extra_groups and channel is not None:
                        routed, receiving = await _cancel_after_the_close(layer, channel, receiving)
                    if routed is not None:
                        await _client_ended_the_call(question_id, routed)
                    else:
                        logger.info("Client went away while waiting on question %s", question_id)
                        await _stopped_waiting(question_id, "the connection to the agent closed")
        raise
    finally:
        runtime.waiting_now -= 1
        runtime.waiting_on[question_id] -= 1
        if runtime.waiting_on[question_id] <= 0:
            del runtime.waiting_on[question_id]
        if receiving is not None:
            # Not awaited: the call is over, and its answer was read from the row.
            receiving.cancel()
            receiving.add_done_callback(_retrieve)
        if channel is not None:
            await layer_groups.leave(groups, channel)
