"""Telegram's updates, however they arrive (its webhook, notify.chat_views; or getUpdates, polled here).

A `callback_query` is a button press (notify.presses decides it, answerCallbackQuery tells the presser alone); a
message `/start CODE` or `/link CODE` links its sender's account with a code from their Notifications page.
With HOOKBRIDGE_TELEGRAM_POLL, for a server Telegram cannot reach, each server process asks getUpdates for them;
Telegram gives them to one asker at a time (a second is refused with 409 and waits its turn).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

from core.db import database_sync_to_async
from core.errors import Refused
from notify import presses, telegram
from notify.models import Delivery, LinkCode, Platform
from notify.presses import text_of
from notify.sending import Failed
from questions.models import Question

logger = logging.getLogger(__name__)
POLL_SECONDS = 25
PAUSE_SECONDS = 5.0


def telegram_press(query: dict[str, Any]) -> presses.Press:
    """The press a callback_query is: who, which button, on which message; Refused (400) when it is none of ours."""
    sender, message = query.get("from"), query.get("message")
    if not isinstance(sender, dict) or not isinstance(message, dict) or not isinstance(message.get("chat"), dict):
        raise Refused("callback_query: no sender or message", 400)
    step_id, choice = presses.read_button(text_of(query.get("data")))
    name = text_of(sender.get("username")) or text_of(sender.get("first_name")) or "someone"
    return presses.Press(
        Platform.TELEGRAM, step_id, choice, text_of(sender.get("id")), name, text_of(message["chat"].get("id")),
        text_of(message.get("message_id")),
    )  # fmt: skip


def telegram_decide(press: presses.Press, remote_addr: str | None) -> tuple[str, str]:
    """Decide, and (what to tell the presser, the pressed message's new text when it is not the step's own).

    Only the bot's own messages make callback queries, so a press on a message of the step's chat whose id is not
    the one kept is the step's message that a worker which died sent before keeping its id (notify.telegram): it
    counts, and is edited here, since no update step knows it.
    """
    kept = Delivery.objects.filter(pk=press.step_id, channel=Platform.TELEGRAM, posted_in=press.where).first()
    same = press if kept is None else dataclasses.replace(press, message_id=kept.posted_id)
    told = presses.decide(same, remote_addr)
    if kept is None or kept.posted_id == press.message_id:
        return told, ""
    question = Question.objects.select_related("answer").get(pk=kept.question_id)
    return told, "" if question.is_pending else telegram.ended_text(question)


def telegram_link(message: dict[str, Any]) -> str:
    """A `/start CODE` or `/link CODE` message: link its sender; what the bot says back."""
    words = text_of(message.get("text"), 100).split()
    found = message.get("from")
    sender: dict[str, Any] = found if isinstance(found, dict) else {}
    if len(words) != 2 or words[0].split("@")[0] not in ("/start", "/link"):
        return ""
    name = text_of(sender.get("username")) or text_of(sender.get("first_name"))
    try:
        account = LinkCode.redeem(Platform.TELEGRAM, words[1], text_of(sender.get("id")), name)
    except ValueError as exc:
        return f"Not linked: {exc}."
    return f"Linked: your presses here now answer as {account.user.get_username()} in Hook Bridge."


async def handle(update: dict[str, Any], remote_addr: str | None) -> None:
    query, message = update.get("callback_query"), update.get("message")
    if isinstance(query, dict):
        press = telegram_press(query)
        query_id = text_of(query.get("id"))
        try:
            told, lost_copy = await database_sync_to_async(telegram_decide)(press, remote_addr)
        except Refused as refused:
            if refused.status != 403:
                raise
            told, lost_copy = refused.message, ""
        try:
            await asyncio.to_thread(telegram.tell, query_id, told)
            if lost_copy:
                await asyncio.to_thread(telegram.update, press.where, press.message_id, lost_copy)
        except Failed as failed:
            logger.warning("Could not answer a Telegram press on step %s: %s", press.step_id, failed.reason)
    elif isinstance(message, dict) and isinstance(message.get("chat"), dict):
        said = await database_sync_to_async(telegram_link)(message)
        if said:
            try:
                await asyncio.to_thread(telegram.say, text_of(message["chat"].get("id")), said)
            except Failed as failed:
                logger.warning("Could not answer a Telegram link message: %s", failed.reason)


async def poll_forever() -> None:
    """getUpdates, for as long as the server runs: each update handled as the webhook handles it."""
    offset = 0
    while True:
        try:
            found = await asyncio.to_thread(telegram.updates, offset, POLL_SECONDS)
        except Failed as failed:
            logger.info("Telegram's updates could not be read (%s); again in %s s", failed.reason, PAUSE_SECONDS)
            await asyncio.sleep(PAUSE_SECONDS)
            continue
        for update in found:
            update_id = update.get("update_id")
            offset = max(offset, update_id + 1) if isinstance(update_id, int) else offset
            try:
                await handle(update, None)
            except Refused as refused:
                logger.warning("Refused a Telegram update: %s", refused.message)
