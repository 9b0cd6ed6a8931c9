"""Slack: a Block Kit message per question (chat.postMessage), updated once it ends (chat.update).

Through slack_sdk's WebClient, at HOOKBRIDGE_SLACK_API_URL (Slack's own by default). Single-choice questions
get one button per option, approvals Allow and Deny, everything else an "Answer…" button that opens the
question's signed link. A button press comes back to notify.views.slack_actions, signed by Slack.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from notify.sending import Failed, Posted
from questions import links
from questions.models import Question

# Slack's errors that no retry mends: the setting (token, channel, scopes) must change.
PERMANENT = {
    "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "no_permission",
    "missing_scope", "channel_not_found", "is_archived", "not_in_channel", "msg_too_long", "invalid_blocks",
    "message_not_found", "cant_update_message", "user_not_found", "ekm_access_denied", "team_access_not_granted",
}  # fmt: skip
ACTION = "hookbridge-answer"
TEXT_LIMIT = 2900  # a section's text may be 3,000 characters


def configured() -> bool:
    return bool(settings.HOOKBRIDGE_SLACK_BOT_TOKEN)


def client() -> WebClient:
    base = settings.HOOKBRIDGE_SLACK_API_URL
    return WebClient(token=settings.HOOKBRIDGE_SLACK_BOT_TOKEN, base_url=base if base.endswith("/") else base + "/")


def mrkdwn(markdown: str) -> str:
    """An agent's markdown in Slack's own: escaped, bold and links rewritten, cut to fit one section."""
    text = markdown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = re.sub(r"\[([^\]]+)\]\((https?://[^)\s]+)\)", r"<\2|\1>", text)
    text = re.sub(r"\*\*(.+?)\*\*", r"*\1*", text)
    text = re.sub(r"__(.+?)__", r"_\1_", text)
    text = re.sub(r"^#{1,6}\s+(.+)$", r"*\1*", text, flags=re.MULTILINE)
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


def action_value(question: Question, choice: str) -> str:
    return json.dumps({"q": str(question.pk), "c": choice})


def blocks(question: Question) -> list[dict[str, Any]]:
    """The message: who asks, the question, and what a person can do from Slack."""
    where = f" · {question.session.project_name}" if question.session and question.session.project_name else ""
    body = str(question.payload.get("title") or question.text)
    shown: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{mrkdwn(question.asker_name)}* asks{where}"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn(body) or "(no text)"}},
    ]
    buttons: list[dict[str, Any]] = []
    if question.kind == "approval":
        buttons = [
            _button("Allow", action_value(question, "allow"), 0, style="primary"),
            _button("Deny", action_value(question, "deny"), 1, style="danger"),
        ]
    elif question.kind == "question" and question.options:
        buttons = [
            _button(str(option["label"])[:75], action_value(question, str(option["value"])), n)
            for n, option in enumerate(question.options[:20])
        ]
    link = links.url(question.pk, "slack")
    buttons.append(
        {"type": "button", "text": {"type": "plain_text", "text": "Answer…"}, "url": link, "action_id": "open"}
    )
    for start in range(0, len(buttons), 25):
        shown.append({"type": "actions", "block_id": f"answer-{start}", "elements": buttons[start : start + 25]})
    return shown


def _button(label: str, value: str, index: int, style: str = "") -> dict[str, Any]:
    button: dict[str, Any] = {"type": "button", "text": {"type": "plain_text", "text": label}, "value": value}
    button["action_id"] = f"{ACTION}-{index}"  # unique within the message, as Slack requires
    if style:
        button["style"] = style
    return button


def ended_blocks(question: Question) -> list[dict[str, Any]]:
    """The message once the question ended: who answered what, or why it ended; no buttons."""
    body = str(question.payload.get("title") or question.text)
    if question.status == "answered":
        outcome = f"Answered by *{mrkdwn(question.answer.answered_by)}*: {mrkdwn(question.answer.display)}"
    else:
        outcome = mrkdwn(question.status_sentence(to_agent=False))
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{mrkdwn(question.asker_name)}* asked"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn(body) or "(no text)"}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": outcome[:TEXT_LIMIT]}]},
    ]


def _call(method: str, **arguments: Any) -> Any:
    try:
        return getattr(client(), method)(**arguments)
    except SlackApiError as exc:
        error = str(exc.response.get("error", "unknown_error"))
        raise Failed(f"Slack said {error}", permanent=error in PERMANENT) from None
    except OSError as exc:  # refused, unreachable, a timeout: the network, not the request
        raise Failed(f"Slack could not be reached: {exc}", permanent=False) from None


# The marker every message carries (Slack's message metadata): the step it was posted for.
MARKER_EVENT = "hookbridge_step"
CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{6,}$")


def marker(step_id: int, update_id: int | None = None) -> dict[str, Any]:
    """The message's metadata: the step that posted it and, once updated, the step that updated it."""
    payload = {"step": str(step_id)} | ({"update": str(update_id)} if update_id is not None else {})
    return {"event_type": MARKER_EVENT, "event_payload": payload}


def _payload(message: Any) -> dict[str, Any]:
    found = message.get("metadata") if isinstance(message, dict) else None
    if not isinstance(found, dict) or found.get("event_type") != MARKER_EVENT:
        return {}
    payload = found.get("event_payload")
    return payload if isinstance(payload, dict) else {}


def _messages(response: Any) -> list[Any]:
    messages = response.get("messages") if hasattr(response, "get") else None
    return messages if isinstance(messages, list) else []


def post(channel: str, text: str, shown: list[dict[str, Any]], step_id: int) -> Posted:
    response = _call(
        "chat_postMessage", channel=channel, text=text, blocks=shown, unfurl_links=False, metadata=marker(step_id)
    )
    return Posted(str(response["channel"]), str(response["ts"]))


def find_posted(channel_id: str, step_id: int, since: float) -> Posted | None:
    """The message posted for step `step_id` in `channel_id` at `since` or later (a Unix time), if Slack has one.

    For a step whose sender died while posting: its message may be there without its ts in our row.
    """
    response = _call(
        "conversations_history", channel=channel_id, oldest=f"{since:.6f}", include_all_metadata=True, limit=200
    )
    for message in _messages(response):
        if _payload(message).get("step") == str(step_id):
            return Posted(channel_id, str(message.get("ts", "")))
    return None


def shows_update(channel_id: str, ts: str, update_id: int) -> bool:
    """Whether the message at `ts` already carries update step `update_id` (its sender died after chat.update)."""
    response = _call(
        "conversations_history", channel=channel_id, latest=ts, oldest=ts, inclusive=True, limit=1,
        include_all_metadata=True,
    )  # fmt: skip
    return any(_payload(message).get("update") == str(update_id) for message in _messages(response))


def channel_id_named(name: str) -> str:
    """The ID of the channel called `name` (with or without its #), '' when the bot sees none (channels:read)."""
    wanted, cursor = name.strip().lstrip("#"), ""
    while True:
        response = _call(
            "conversations_list", types="public_channel,private_channel", exclude_archived=True, limit=200,
            **({"cursor": cursor} if cursor else {}),
        )  # fmt: skip
        channels = response.get("channels") if hasattr(response, "get") else None
        for channel in channels if isinstance(channels, list) else []:
            if isinstance(channel, dict) and channel.get("name") == wanted and isinstance(channel.get("id"), str):
                return str(channel["id"])
        following = response.get("response_metadata") if hasattr(response, "get") else None
        cursor = following.get("next_cursor", "") if isinstance(following, dict) else ""
        if not cursor:
            return ""


def update(channel_id: str, ts: str, text: str, shown: list[dict[str, Any]], metadata: dict[str, Any]) -> None:
    _call("chat_update", channel=channel_id, ts=ts, text=text, blocks=shown, metadata=metadata)


def tell(channel_id: str, user: str, text: str) -> None:
    """A message only `user` sees (a late button press is told who answered first)."""
    _call("chat_postEphemeral", channel=channel_id, user=user, text=text)


def email_of(user: str) -> str:
    """The Slack user's e-mail, to find them among Hook Bridge's people ('' when Slack does not say)."""
    try:
        found = _call("users_info", user=user)
    except Failed:
        return ""
    # Whatever Slack (or something standing in for it) answers: no user, no profile, no e-mail is "".
    person = found.get("user") if hasattr(found, "get") else None
    profile = person.get("profile") if isinstance(person, dict) else None
    email = profile.get("email") if isinstance(profile, dict) else None
    return email if isinstance(email, str) else ""
