"""Sending what is due, in every server process: claim a step, build it, send it, keep what happened.

Each process polls the steps that are due (and is woken at once by its own asks and answers). A step is
claimed with a conditional UPDATE, so with several workers it is sent once; a worker that died while
sending leaves it claimed, and after STALE_SECONDS another takes it again. Building a message reads the
database (its own thread); sending it waits on a network (a thread of its own), so a slow Slack or mail
server holds up nothing but its own step. Transient failures come back after a growing pause; permanent
ones (a bad token, no such channel) are given up at once, with the reason kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.utils import timezone

from core import runtime as core_runtime
from core.db import database_sync_to_async
from notify import email, health, runtime, slack, steps, webhook
from notify.models import Delivery, Purpose, Status
from notify.sending import Failed
from questions.models import Question

logger = logging.getLogger(__name__)

TASK = "notify-dispatcher"
POLL_SECONDS = 1.0
STALE_SECONDS = 120
BACKOFF_SECONDS = (5, 30, 120, 600)  # then given up: five tries in about 13 minutes
BATCH = 20


def wake() -> None:
    """A step may be due now: look without waiting for the poll (from any thread of this process)."""
    loop, event = core_runtime.server_loop, runtime.wakeup
    if loop is not None and event is not None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server is going
            loop.call_soon_threadsafe(event.set)


def claim_due(now: Any = None) -> list[Delivery]:
    now = now or timezone.now()
    # A step left claimed by a worker that went away while sending it is due again. Looked for now and then,
    # not at every poll: an UPDATE a second would take SQLite's write lock for nothing.
    if time.monotonic() - runtime.stale_checked_at > STALE_SECONDS / 4:
        runtime.stale_checked_at = time.monotonic()
        stale = now - timedelta(seconds=STALE_SECONDS)
        Delivery.objects.filter(status=Status.SENDING, claimed_at__lt=stale).update(status=Status.DUE)
    due = Delivery.objects.filter(status=Status.DUE, due_at__lte=now).order_by("due_at", "id")[:BATCH]
    return [delivery for delivery in due if delivery.claim()]


def prepare(delivery: Delivery) -> Callable[[], Any] | None:
    """What sending this step does, built from the database now; None when it is no longer needed."""
    question = Question.objects.select_related("session", "answer").get(pk=delivery.question_id)
    if delivery.purpose == Purpose.NOTIFY and not question.is_pending:
        ended = "The question ended before this step was due."
        Delivery.objects.filter(pk=delivery.pk).update(status=Status.SKIPPED, last_error=ended)
        return None
    title = f"{question.asker_name} asks: {question.short_title}"
    if delivery.channel == "slack" and delivery.purpose == Purpose.UPDATE:
        shown = slack.ended_blocks(question)
        return lambda: slack.update(delivery.slack_channel_id, delivery.slack_ts, title, shown)
    if delivery.channel == "slack":
        shown = slack.blocks(question)
        return lambda: slack.post(delivery.target, title, shown)
    if delivery.channel == "email":
        mails = email.mails(question, delivery.target.split(","))
        return lambda: email.send(mails)
    if delivery.channel == "webhook":
        payload = webhook.message(question)
        return lambda: webhook.post(delivery.target, payload)
    delivery.record(ok=False, error=f"No channel {delivery.channel!r} here.")
    return None


def finish(delivery: Delivery, sent: Any, took_ms: int) -> None:
    delivery.record(ok=True, took_ms=took_ms)
    if isinstance(sent, slack.Posted):
        Delivery.objects.filter(pk=delivery.pk).update(slack_channel_id=sent.channel_id, slack_ts=sent.ts)
        # Answered while the message was on its way: it is to say so at once.
        if not Question.objects.filter(pk=delivery.question_id, status="pending").exists():
            Delivery.after_question_ended(delivery.question_id)


def give_up_or_retry(delivery: Delivery, failed: Failed, took_ms: int) -> None:
    tries = delivery.attempts + 1
    retry_in = None if failed.permanent or tries > len(BACKOFF_SECONDS) else BACKOFF_SECONDS[tries - 1]
    delivery.record(ok=False, error=failed.reason, took_ms=took_ms, retry_in=retry_in)
    logger.warning(
        "%s for question %s failed (try %d): %s%s", delivery.channel, delivery.question_id, tries, failed.reason,
        "" if retry_in is None else f"; again in {retry_in} s",
    )  # fmt: skip


async def send(delivery: Delivery) -> None:
    step = await database_sync_to_async(prepare)(delivery)
    if step is None:
        return
    started = time.monotonic()
    try:
        sent = await asyncio.to_thread(step)
    except Failed as failed:
        await database_sync_to_async(give_up_or_retry)(delivery, failed, round((time.monotonic() - started) * 1000))
    else:
        await database_sync_to_async(finish)(delivery, sent, round((time.monotonic() - started) * 1000))
    await database_sync_to_async(health.changed)()
    await database_sync_to_async(steps.changed)(delivery.question_id)


async def dispatch_due() -> int:
    claimed = await database_sync_to_async(claim_due)()
    for delivery in claimed:
        try:
            await send(delivery)
        except Exception:
            logger.exception("Sending %s for question %s broke", delivery.channel, delivery.question_id)
            await database_sync_to_async(delivery.record)(ok=False, error="An error in Hook Bridge; see its log.")
    return len(claimed)


async def _dispatch_forever() -> None:
    runtime.wakeup = event = asyncio.Event()
    while True:
        try:
            await dispatch_due()
        except Exception:
            logger.warning("Could not send the notifications due; trying again shortly", exc_info=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), POLL_SECONDS)
        event.clear()


def ensure_running() -> None:
    """Start this process's dispatcher on the running loop (once; again if that loop has gone)."""
    core_runtime.keep_running(TASK, _dispatch_forever)
