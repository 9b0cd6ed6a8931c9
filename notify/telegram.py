"""Telegram (the Bot API): a message per question with an inline keyboard, edited once the question ends.

At HOOKBRIDGE_TELEGRAM_API_URL (`https://api.telegram.org`; a fake's in the tests), as the bot whose token is
HOOKBRIDGE_TELEGRAM_BOT_TOKEN, to HOOKBRIDGE_TELEGRAM_CHAT_ID or a project's own chat. An approval's message has
Allow and Deny, a single-choice question's one button per option, anything else a link to its page. A press
comes back as a `callback_query` update (notify.chat_views.telegram_webhook), answered with
answerCallbackQuery, which the presser alone sees.

The Bot API cannot look up what a bot sent, nor take a key that makes a repeated sendMessage a no-op (its
maintainers: tdlib/telegram-bot-api#126): a step whose worker died after Telegram took its message, before the
message's id was kept, is sent again (the person sees it twice, both with live buttons; a press on the first
tells its id, and it is then edited with the rest). Nothing is lost; a duplicate is the cost.
"""

from __future__ import annotations

import html
from typing import Any

import requests
from django.conf import settings

from notify import presses
from notify.sending import Failed, Posted
from questions import links
from questions.models import Question

TIMEOUT_SECONDS = 10.0
TEXT_LIMIT = 4000  # a message may be 4,096 characters once its entities are parsed


def configured() -> bool:
    return bool(settings.HOOKBRIDGE_TELEGRAM_BOT_TOKEN)


def _session() -> requests.Session:
    session = requests.Session()
    session.max_redirects = 0  # the Bot API never redirects; a redirect would carry the token elsewhere
    return session


def call(method: str, *, wait: float = TIMEOUT_SECONDS, **arguments: Any) -> Any:
    """One Bot API method; its `result`, or Failed (permanent when the request itself is wrong, as Telegram says)."""
    base = settings.HOOKBRIDGE_TELEGRAM_API_URL.rstrip("/")
    url = f"{base}/bot{settings.HOOKBRIDGE_TELEGRAM_BOT_TOKEN}/{method}"
    try:
        with _session() as session:
            response = session.post(url, json=arguments, timeout=wait, allow_redirects=False)
    except requests.RequestException as exc:
        # Never the exception's text: its URL holds the bot's token.
        raise Failed(f"Telegram could not be reached ({type(exc).__name__})", permanent=False) from None
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("ok") is True:
        return body.get("result")
    said = body.get("description") if isinstance(body, dict) else None
    reason = f"Telegram said {response.status_code}: {said or 'no description'}"
    if response.status_code == 400 and isinstance(said, str) and "message is not modified" in said:
        return None  # an edit that changes nothing (a second worker made it first) is done
    # 429 (too many requests) and Telegram's own failures pass; a bad token, chat or request does not.
    raise Failed(reason, permanent=response.status_code not in (429,) and response.status_code < 500)


def _text(question: Question, link: str, with_link: bool) -> str:
    where = f" · {question.session.project_name}" if question.session and question.session.project_name else ""
    body = str(question.payload.get("title") or question.text) or "(no text)"
    head = f"<b>{html.escape(question.asker_name)}</b> asks{html.escape(where)}\n\n"
    tail = f'\n\n<a href="{html.escape(link)}">Open in Hook Bridge</a>' if with_link else ""
    room = TEXT_LIMIT - len(head) - len(tail)
    shown = body if len(body) <= room else body[: room - 1] + "…"
    return head + html.escape(shown) + tail


def message(question: Question, step_id: int) -> dict[str, Any]:
    """sendMessage's arguments but the chat: the text (HTML), and the buttons a press decides with."""
    link = links.url(question.pk, "telegram")
    rows: list[list[dict[str, str]]] = []
    offered = presses.choices(question)
    if question.kind == "approval":
        rows.append([{"text": label, "callback_data": presses.button_data(step_id, data)} for label, data in offered])
    else:
        rows.extend([{"text": label[:64], "callback_data": presses.button_data(step_id, d)}] for label, d in offered)
    # Telegram takes only public https addresses in a button; any other link goes in the text.
    button_link = link.startswith("https://")
    if button_link:
        rows.append([{"text": "Open…" if offered else "Answer…", "url": link}])
    return {
        "text": _text(question, link, not button_link), "parse_mode": "HTML",
        "link_preview_options": {"is_disabled": True}, "reply_markup": {"inline_keyboard": rows},
    }  # fmt: skip


def ended_text(question: Question) -> str:
    body = str(question.payload.get("title") or question.text) or "(no text)"
    head = f"<b>{html.escape(question.asker_name)}</b> asked\n\n"
    said = "\n\n<i>" + html.escape(presses.outcome(question)[:500]) + "</i>"
    room = TEXT_LIMIT - len(head) - len(said)
    return head + html.escape(body if len(body) <= room else body[: room - 1] + "…") + said


def post(chat_id: str, shown: dict[str, Any]) -> Posted:
    sent = call("sendMessage", chat_id=chat_id, **shown)
    try:
        return Posted(str(sent["chat"]["id"]), str(sent["message_id"]))
    except (KeyError, TypeError):
        raise Failed("Telegram's answer to sendMessage named no message", permanent=False) from None


def update(chat_id: str, message_id: str, text: str) -> None:
    """The message says how its question ended, and its buttons go."""
    call("editMessageText", chat_id=chat_id, message_id=int(message_id), text=text, parse_mode="HTML",
         link_preview_options={"is_disabled": True}, reply_markup={"inline_keyboard": []})  # fmt: skip


def tell(callback_query_id: str, text: str) -> None:
    """The answer to a press, shown to the presser alone (an alert they dismiss, for a refusal worth reading)."""
    call("answerCallbackQuery", callback_query_id=callback_query_id, text=text[:200], show_alert=len(text) > 60)


def say(chat_id: str, text: str) -> None:
    """A plain message to a chat (the bot's reply when someone links their account)."""
    call("sendMessage", chat_id=chat_id, text=text[:TEXT_LIMIT])


def set_webhook(url: str, secret: str) -> None:
    call("setWebhook", url=url, secret_token=secret, allowed_updates=["callback_query", "message"])


def updates(offset: int, timeout: int) -> list[dict[str, Any]]:
    """getUpdates (long polling, for a server nobody can reach from outside): the updates after `offset`."""
    found = call(
        "getUpdates", wait=timeout + TIMEOUT_SECONDS, offset=offset, timeout=timeout,
        allowed_updates=["callback_query", "message"],
    )  # fmt: skip
    return [update for update in found if isinstance(update, dict)] if isinstance(found, list) else []
