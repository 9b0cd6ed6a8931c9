"""Discord: a message per question with buttons (components), edited once the question ends.

Through Discord's REST API at HOOKBRIDGE_DISCORD_API_URL (`https://discord.com/api/v10`; a fake's in the
tests), as the bot whose token is HOOKBRIDGE_DISCORD_BOT_TOKEN, to HOOKBRIDGE_DISCORD_CHANNEL_ID or a project's own
channel. A press comes back as an interaction (notify.chat_views.discord_interactions), signed with the
application's Ed25519 key.

Each message carries its step as a nonce with `enforce_nonce`: Discord answers a second post with the same nonce,
within a few minutes, with the message already made instead of another. So a step whose worker died after
Discord took its message is simply posted again, and the person sees it once.
"""

from __future__ import annotations

from typing import Any

import requests
from django.conf import settings

from notify import presses
from notify.sending import Failed, Posted
from questions import links
from questions.models import Question

TIMEOUT_SECONDS = 10.0
TEXT_LIMIT = 1900  # a message's content may be 2,000 characters
# Component types and button styles (Discord's numbers).
ACTION_ROW, BUTTON = 1, 2
PRIMARY, SECONDARY, SUCCESS, DANGER, LINK = 1, 2, 3, 4, 5


def configured() -> bool:
    return bool(settings.HOOKBRIDGE_DISCORD_BOT_TOKEN)


def call(method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """One REST call as the bot; its JSON, or Failed (permanent when the request itself is wrong)."""
    url = settings.HOOKBRIDGE_DISCORD_API_URL.rstrip("/") + path
    headers = {"Authorization": f"Bot {settings.HOOKBRIDGE_DISCORD_BOT_TOKEN}",
               "User-Agent": "DiscordBot (https://github.com/hookbridge, 1)"}  # fmt: skip
    try:
        with requests.Session() as session:
            response = session.request(
                method, url, json=body, headers=headers, timeout=TIMEOUT_SECONDS, allow_redirects=False
            )
    except requests.RequestException as exc:
        raise Failed(f"Discord could not be reached ({type(exc).__name__})", permanent=False) from None
    try:
        found = response.json() if response.content else None
    except ValueError:
        found = None
    if 200 <= response.status_code < 300:
        return found
    said = found.get("message") if isinstance(found, dict) else None
    reason = f"Discord said {response.status_code}: {said or 'no message'}"
    raise Failed(reason, permanent=response.status_code != 429 and response.status_code < 500)


def content(question: Question, with_link: str) -> str:
    where = f" · {question.session.project_name}" if question.session and question.session.project_name else ""
    body = str(question.payload.get("title") or question.text) or "(no text)"
    head = f"**{_plain(question.asker_name)}** asks{_plain(where)}\n"
    tail = f"\nOpen in Hook Bridge: <{with_link}>" if with_link else ""
    room = TEXT_LIMIT - len(head) - len(tail)
    return head + (body if len(body) <= room else body[: room - 1] + "…") + tail


def _plain(text: str) -> str:
    """A name shown bold: Discord's markdown in it is shown, not applied."""
    return "".join("\\" + char if char in "*_~`|>\\" else char for char in text)


def components(question: Question, step_id: int, link: str) -> list[dict[str, Any]]:
    buttons: list[dict[str, Any]] = []
    for label, data in presses.choices(question):
        style = {presses.ALLOW: SUCCESS, presses.DENY: DANGER}.get(data, PRIMARY)
        data_of = presses.button_data(step_id, data)
        buttons.append({"type": BUTTON, "style": style, "label": label[:80], "custom_id": data_of})
    if link:
        buttons.append({"type": BUTTON, "style": LINK, "label": "Open…" if buttons else "Answer…", "url": link})
    # Five buttons to a row, five rows to a message.
    return [{"type": ACTION_ROW, "components": buttons[at : at + 5]} for at in range(0, min(len(buttons), 25), 5)]


def message(question: Question, step_id: int) -> dict[str, Any]:
    """The message to post: its content, its buttons, and the step as its nonce (a repeat makes no second one)."""
    link = links.url(question.pk, "discord")
    # Discord takes a link button to an http(s) address; one that is not public goes in the text too.
    shown_link = "" if link.startswith("https://") else link
    return {
        "content": content(question, shown_link), "components": components(question, step_id, link),
        "nonce": nonce(step_id), "enforce_nonce": True, "allowed_mentions": {"parse": []},
    }  # fmt: skip


def nonce(step_id: int) -> str:
    return f"hb{step_id}"


def ended(question: Question) -> dict[str, Any]:
    """The message once the question ended: who answered what, or why it ended; no buttons."""
    body = str(question.payload.get("title") or question.text) or "(no text)"
    said = f"\n*{_plain(presses.outcome(question)[:500])}*"
    head = f"**{_plain(question.asker_name)}** asked\n"
    room = TEXT_LIMIT - len(head) - len(said)
    text = head + (body if len(body) <= room else body[: room - 1] + "…") + said
    return {"content": text, "components": [], "allowed_mentions": {"parse": []}}


def post(channel_id: str, shown: dict[str, Any]) -> Posted:
    made = call("POST", f"/channels/{channel_id}/messages", shown)
    try:
        return Posted(str(made["channel_id"]), str(made["id"]))
    except (KeyError, TypeError):
        raise Failed("Discord's answer to the post named no message", permanent=False) from None


def update(channel_id: str, message_id: str, shown: dict[str, Any]) -> None:
    call("PATCH", f"/channels/{channel_id}/messages/{message_id}", shown)
