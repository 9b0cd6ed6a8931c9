"""Sending what is due, in every server process: claim a step, build it, send it, keep what happened.

Each process runs one sender per channel (push, Slack, Telegram, Discord, e-mail, the webhook), so a slow Slack
holds up no e-mail.
A sender claims one step at a time with a conditional UPDATE and a short lease (LEASE_SECONDS), renewed while
it sends: with several workers each step is sent once, and a step whose worker died is taken again as soon as
its lease lapses, seconds later. A step taken over that may already have gone out (its `sending_since` set)
is looked for first: a Slack message carries its step as metadata, so the new sender finds it and records it
instead of posting it twice, and that message gets its update when the question ends; an update carries its step
too, so one taken over is read before it is sent again (settle_doubt). Building a message reads
the database (its own thread); sending it waits on a network (a thread of its own). Transient failures come back
after a growing pause; permanent ones (a bad token, no such channel) are given up at once, with the reason kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.utils import timezone

from core import runtime as core_runtime
from core.db import database_sync_to_async
from notify import discord, email, health, push, runtime, slack, steps, teams, telegram, telegram_updates, webhook
from notify.models import Delivery, Purpose, PushSubscription, Status
from notify.sending import Failed, Posted
from projects import access
from questions.models import Question

logger = logging.getLogger(__name__)

SENDERS = ("push", "slack", "telegram", "discord", "teams", "email", "webhook")
TASK = "notify-sender"
POLL_SECONDS = 1.0
# Push runs in every server process whether or not anyone subscribed yet (a browser may subscribe at any
# time): its sender looks less often, as a step asked here wakes it at once and only another process's
# steps and retries wait for the poll.
PUSH_POLL_SECONDS = 5.0
LEASE_SECONDS = 10.0
RENEW_SECONDS = LEASE_SECONDS / 3
BACKOFF_SECONDS = (5, 30, 120, 600)  # then given up: five tries in about 13 minutes
# Steps read per look; one is claimed at a time, so another worker's sender takes the next.
LOOK_AHEAD = 5


def task_name(channel: str) -> str:
    return f"{TASK}-{channel}"


def wake() -> None:
    """A step may be due now: every sender looks without waiting for the poll (from any thread of this process)."""
    loop = core_runtime.server_loop
    if loop is None:
        return
    for event in list(runtime.wakeups.values()):
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server is going
            loop.call_soon_threadsafe(event.set)


def claim_next(channel: str) -> Delivery | None:
    """One step of `channel` that is due (or whose sender's lease lapsed), claimed for this sender; None: none."""
    now = timezone.now()
    for delivery in Delivery.objects.filter(Delivery.claimable(now), channel=channel).order_by("due_at", "id")[
        :LOOK_AHEAD
    ]:
        if delivery.claim(LEASE_SECONDS):
            return delivery
    return None


def settle_doubt(delivery: Delivery) -> bool:
    """For a Slack step taken over mid-send: look it up first; True when that settled it (nothing is sent now).

    A worker that died after its chat.postMessage (or chat.update) reached Slack left no ts in the row, only
    `sending_since`. Its message carries its step as metadata, so it is found and recorded as sent (and, for a
    question that ended meanwhile, given its update), never posted or updated twice. A look-up that fails for a
    while (Slack unreachable, rate limited) keeps the step in doubt and tries again later: sending blind could
    post twice, skipping blind could leave a message's buttons live. Only a look-up that cannot ever work (no
    channel ID known, a missing scope) lets the step go on as if nothing was sent, said in the log.
    """
    if delivery.sending_since is None or delivery.channel != "slack":
        return False
    try:
        if delivery.purpose == Purpose.UPDATE:
            if not slack.shows_update(delivery.posted_in, delivery.posted_id, delivery.pk):
                return False
            finish(delivery, None, 0)
            return True
        channel_id = slack_channel_id(delivery.target)
        posted = (
            slack.find_posted(channel_id, delivery.pk, delivery.sending_since.timestamp() - 1) if channel_id else None
        )
    except Failed as failed:
        if not failed.permanent:
            give_up_or_retry(delivery, Failed(f"Looking for the message a worker that died may have sent: "
                                              f"{failed.reason}", permanent=False), 0, in_doubt=True)  # fmt: skip
            return True
        logger.warning(
            "Step %s may have been sent by a worker that died, and it cannot be looked up (%s); it goes on as if "
            "it was not (give the bot channels:history and channels:read)", delivery.pk, failed.reason,
        )  # fmt: skip
        return False
    if not channel_id:
        logger.warning(
            "Step %s may have been posted by a worker that died; Slack knows no channel %s, so it goes on as if it "
            "was not (name HOOKBRIDGE_SLACK_CHANNEL by its ID to avoid that)", delivery.pk, delivery.target,
        )  # fmt: skip
        return False
    if posted is None:
        return False
    finish(delivery, posted, 0)
    return True


def slack_channel_id(target: str) -> str:
    """The channel ID Slack's reading methods need: the target itself, the one an earlier post reported, or
    the one Slack lists under that name ('' when none)."""
    if slack.CHANNEL_ID.match(target):
        return target
    known = (
        Delivery.objects.filter(channel="slack", target=target)
        .exclude(posted_in="")
        .values_list("posted_in", flat=True)
        .first()
    )
    return known or slack.channel_id_named(target)


def prepare(delivery: Delivery) -> Callable[[], Any] | None:
    """What sending this step does, built from the database now; None when it is no longer needed."""
    if settle_doubt(delivery):
        return None
    question = Question.objects.select_related("session", "answer").get(pk=delivery.question_id)
    if delivery.purpose == Purpose.NOTIFY and not question.is_pending:
        ended = "The question ended before this step was due."
        Delivery.objects.filter(pk=delivery.pk).update(status=Status.SKIPPED, last_error=ended)
        return None
    title = f"{question.asker_name} asks: {question.short_title}"
    if delivery.channel == "slack" and delivery.purpose == Purpose.UPDATE:
        shown = slack.ended_blocks(question)
        posted_by = (
            Delivery.objects.filter(question_id=delivery.question_id, purpose=Purpose.NOTIFY, channel="slack")
            .filter(posted_id=delivery.posted_id)
            .values_list("pk", flat=True)
            .first()
        )
        # The message says it was updated by this step: a taker-over reads that instead of updating it twice.
        metadata = slack.marker(posted_by or 0, update_id=delivery.pk)
        return lambda: slack.update(delivery.posted_in, delivery.posted_id, title, shown, metadata)
    if delivery.channel == "slack":
        shown = slack.blocks(question)
        return lambda: slack.post(delivery.target, title, shown, delivery.pk)
    if delivery.channel in ("telegram", "discord", "teams"):
        return prepare_chat(delivery, question)
    if delivery.channel == "email":
        mails = email.mails(question, delivery.target.split(","))
        return lambda: email.send(mails)
    if delivery.channel == "webhook":
        payload = webhook.message(question)
        return lambda: webhook.post(delivery.target, payload)
    if delivery.channel == "push":
        return prepare_push(delivery, question)
    delivery.record(ok=False, error=f"No channel {delivery.channel!r} here.")
    return None


def prepare_chat(delivery: Delivery, question: Question) -> Callable[[], Any]:
    """Telegram's, Discord's or Teams' message, or its edit once the question ended. None is looked up when its
    step is taken over mid-send: an edit made twice is the same edit, and a Discord post made again with its step's
    nonce gives back the message already made (a Telegram or Teams one is posted again: notify.telegram says why)."""
    where, message_id = delivery.posted_in, delivery.posted_id
    if delivery.channel == "telegram":
        if delivery.purpose == Purpose.UPDATE:
            text = telegram.ended_text(question)
            return lambda: telegram.update(where, message_id, text)
        sent = telegram.message(question, delivery.pk)
        return lambda: telegram.post(delivery.target, sent)
    if delivery.channel == "teams":
        summary = f"{question.asker_name} asks: {question.short_title}"
        if delivery.purpose == Purpose.UPDATE:
            replaced = teams.ended_card(question)
            return lambda: teams.update(where, message_id, replaced, summary)
        shown = teams.card(question, delivery.pk)
        return lambda: teams.post(delivery.target, shown, summary)
    if delivery.purpose == Purpose.UPDATE:
        edited = discord.ended(question)
        return lambda: discord.update(where, message_id, edited)
    made = discord.message(question, delivery.pk)
    return lambda: discord.post(delivery.target, made)


def prepare_push(delivery: Delivery, question: Question) -> Callable[[], Any] | None:
    subscription = delivery.push_subscription  # its own query, made for push steps only
    gone = ""
    if subscription is None:
        gone = "The browser's subscription was removed before this step was sent."
    elif delivery.purpose == Purpose.NOTIFY and not (
        subscription.user.is_active and access.of_user(subscription.user).may_answer(question.project_id)
    ):
        # Access taken away is gone at once: someone who may no longer answer is told of nothing more.
        gone = f"{subscription.user} may no longer answer this project's questions."
    if gone:
        Delivery.objects.filter(pk=delivery.pk).update(status=Status.SKIPPED, last_error=gone)
        return None
    assert subscription is not None
    if delivery.purpose == Purpose.UPDATE:
        ended = push.ended_message(question)
        return lambda: push.send(subscription, ended)
    shown = push.message(question, delivery.pk)
    return lambda: push.send(subscription, shown)


def prepared(delivery: Delivery) -> Callable[[], Any] | None:
    """prepare(), and the mark that the message is about to leave (what a taker-over looks for)."""
    step = prepare(delivery)
    if step is not None:
        delivery.mark_sending()
    return step


def finish(delivery: Delivery, sent: Any, took_ms: int) -> None:
    if isinstance(sent, Posted):
        # Where the message is, first: what an update and a retry need must never be lost after the post.
        Delivery.objects.filter(pk=delivery.pk).update(posted_in=sent.where, posted_id=sent.message_id)
    delivery.record(ok=True, took_ms=took_ms)
    if delivery.channel == "push" and delivery.push_subscription_id is not None:
        PushSubscription.objects.filter(pk=delivery.push_subscription_id).update(last_sent_at=delivery.sent_at)
    # Answered while the message was on its way: it is to say so at once.
    ended = not Question.objects.filter(pk=delivery.question_id, status="pending").exists()
    updatable = isinstance(sent, Posted) or delivery.channel == "push"
    if updatable and ended and delivery.purpose == Purpose.NOTIFY:
        Delivery.after_question_ended(delivery.question_id)


def give_up_or_retry(delivery: Delivery, failed: Failed, took_ms: int, *, in_doubt: bool = False) -> None:
    """A failed attempt: tried again after a growing pause, or given up. `in_doubt`: the step may have been sent
    (its look-up failed), so the next try looks for it again first."""
    tries = delivery.attempts + 1
    retry_in = None if failed.permanent or tries > len(BACKOFF_SECONDS) else BACKOFF_SECONDS[tries - 1]
    delivery.record(ok=False, error=failed.reason, took_ms=took_ms, retry_in=retry_in, in_doubt=in_doubt)
    if failed.gone and delivery.push_subscription_id is not None:
        # The push service forgot the browser (it unsubscribed, or its subscription expired): nothing will reach it.
        PushSubscription.objects.filter(pk=delivery.push_subscription_id).delete()
        logger.info("Removed the push subscription %s: %s", delivery.push_subscription_id, failed.reason)
    logger.warning(
        "%s for question %s failed (try %d): %s%s", delivery.channel, delivery.question_id, tries, failed.reason,
        "" if retry_in is None else f"; again in {retry_in} s",
    )  # fmt: skip


async def send(delivery: Delivery) -> None:
    renewing = asyncio.create_task(_renew(delivery))
    try:
        step = await database_sync_to_async(prepared)(delivery)
        if step is None:
            return
        started = time.monotonic()
        try:
            sent = await asyncio.to_thread(step)
        except Failed as failed:
            took = round((time.monotonic() - started) * 1000)
            await database_sync_to_async(give_up_or_retry)(delivery, failed, took)
        else:
            await database_sync_to_async(finish)(delivery, sent, round((time.monotonic() - started) * 1000))
    finally:
        renewing.cancel()
    await database_sync_to_async(health.changed)()
    await database_sync_to_async(steps.changed)(delivery.question_id)


async def _renew(delivery: Delivery) -> None:
    """Keep the claim while the step is sent: only a sender that is gone lets its lease lapse."""
    while True:
        await asyncio.sleep(RENEW_SECONDS)
        if not await database_sync_to_async(delivery.renew)(LEASE_SECONDS):
            logger.warning("Lost the claim on step %s while sending it", delivery.pk)
            return


async def send_one(channel: str) -> bool:
    """Claim and send one step of `channel`; False when none is due."""
    delivery = await database_sync_to_async(claim_next)(channel)
    if delivery is None:
        return False
    try:
        await send(delivery)
    except Exception:
        logger.exception("Sending %s for question %s broke", delivery.channel, delivery.question_id)
        await database_sync_to_async(delivery.record)(ok=False, error="An error in Hook Bridge; see its log.")
    return True


async def drain(channel: str) -> int:
    """Send `channel`'s steps until none is due; how many."""
    sent = 0
    while await send_one(channel):
        sent += 1
    return sent


async def dispatch_due() -> int:
    """Every channel's due steps, each channel on its own: how many steps were taken."""
    return sum(await asyncio.gather(*(drain(channel) for channel in SENDERS)))


async def _send_forever(channel: str) -> None:
    runtime.wakeups[channel] = event = asyncio.Event()
    poll = PUSH_POLL_SECONDS if channel == "push" else POLL_SECONDS
    while True:
        try:
            await drain(channel)
        except Exception:
            logger.warning("Could not send the %s steps due; trying again shortly", channel, exc_info=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), poll)
        event.clear()


def ensure_running() -> None:
    """Start this process's senders, one per channel set up, on the running loop (once; again if it has gone)."""
    configured = {
        "push": True, "slack": slack.configured(), "telegram": telegram.configured(), "discord": discord.configured(),
        "teams": teams.configured(), "email": email.configured(), "webhook": webhook.configured(),
    }  # fmt: skip
    for channel in SENDERS:
        if configured[channel]:
            core_runtime.keep_running(task_name(channel), functools.partial(_send_forever, channel))
    if telegram.configured() and settings.HOOKBRIDGE_TELEGRAM_POLL:
        core_runtime.keep_running("telegram-updates", telegram_updates.poll_forever)
