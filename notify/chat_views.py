"""Presses and links coming back from Telegram, Discord and Microsoft Teams.

POST /integrations/telegram/webhook takes Telegram's updates: refused (401) unless its
X-Telegram-Bot-Api-Secret-Token is HOOKBRIDGE_TELEGRAM_WEBHOOK_SECRET; a `callback_query` is a button press, a
message `/start CODE` or `/link CODE` links the sender's account. POST /integrations/discord/interactions takes
Discord's interactions: refused (401) unless X-Signature-Ed25519 is the application's signature of
X-Signature-Timestamp and the body, and the timestamp is within five minutes; a PING is answered with a PONG, a
button press with the message updated to say who decided (or a message to the presser alone), the link form's
submission by linking. POST /integrations/teams/messages takes the Bot Framework's activities, refused (401) unless
their bearer token holds (notify.teams.verified): an Adaptive Card's Action.Execute is a press, answered with the
card that says who decided (or a message to the presser); a message `link CODE` links its sender. Nothing is read
before the request is proven; anything not understood is a 4xx with
nothing changed and a line in the log, never a 500.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
import time
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from core import jsonapi
from core.db import database_sync_to_async
from core.errors import Refused
from notify import discord, presses, teams, telegram_updates
from notify.models import LinkCode, Platform
from notify.presses import text_of
from notify.sending import Failed
from tokens.auth import client_address

logger = logging.getLogger(__name__)

# An update or interaction is a few kilobytes; far past this is none.
MAX_BODY = 64 * 1024
MAX_SKEW_SECONDS = 300


def _refused(refused: Refused, platform: str) -> HttpResponse:
    logger.warning("Refused a %s request: %s", platform, refused.message)
    return HttpResponse(refused.message, status=refused.status, content_type="text/plain")


def _body(request: HttpRequest) -> Any:
    if len(request.body) > MAX_BODY:
        raise Refused(f"the body is larger than {MAX_BODY} bytes", 413)
    try:
        return jsonapi.loads(request.body)
    except jsonapi.BadJSON as exc:
        raise Refused(f"the body {exc}", 400) from None


@csrf_exempt
@require_POST
async def telegram_webhook(request: HttpRequest) -> HttpResponse:
    secret = settings.HOOKBRIDGE_TELEGRAM_WEBHOOK_SECRET
    try:
        if not secret or not settings.HOOKBRIDGE_TELEGRAM_BOT_TOKEN:
            raise Refused("Telegram is not set up here (HOOKBRIDGE_TELEGRAM_WEBHOOK_SECRET)", 404)
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
        if not hmac.compare_digest(given.encode(), secret.encode()):
            raise Refused("X-Telegram-Bot-Api-Secret-Token: not this server's secret", 401)
        update = _body(request)
        if not isinstance(update, dict):
            raise Refused("the update is not an object", 400)
        await telegram_updates.handle(update, client_address(request))
    except Refused as refused:
        return _refused(refused, "Telegram")
    return HttpResponse(status=200)


# Discord

PING, COMPONENT, MODAL_SUBMIT = 1, 3, 5
PONG, MESSAGE, UPDATE_MESSAGE, MODAL = 1, 4, 7, 9
EPHEMERAL = 64
LINK_BUTTON, LINK_FORM, LINK_FIELD = "hb-link", "hb-link-form", "code"


def discord_verified(request: HttpRequest) -> dict[str, Any]:
    """The interaction, once its signature holds; Refused otherwise."""
    key = settings.HOOKBRIDGE_DISCORD_PUBLIC_KEY
    if not key:
        raise Refused("Discord is not set up here (HOOKBRIDGE_DISCORD_PUBLIC_KEY)", 404)
    signature = request.headers.get("X-Signature-Ed25519", "")
    timestamp = request.headers.get("X-Signature-Timestamp", "")
    if not timestamp.isdigit() or len(timestamp) > 12 or abs(time.time() - int(timestamp)) > MAX_SKEW_SECONDS:
        raise Refused("X-Signature-Timestamp: not a Unix time within five minutes of now", 401)
    if len(request.body) > MAX_BODY:
        raise Refused(f"the body is larger than {MAX_BODY} bytes", 413)
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(key)).verify(
            bytes.fromhex(signature), timestamp.encode() + request.body
        )
    except (ValueError, InvalidSignature):
        raise Refused("X-Signature-Ed25519: not the application's signature of this request", 401) from None
    interaction = _body(request)
    if not isinstance(interaction, dict):
        raise Refused("the interaction is not an object", 400)
    return interaction


def _say(text: str) -> dict[str, Any]:
    return {"type": MESSAGE, "data": {"content": text[:2000], "flags": EPHEMERAL, "allowed_mentions": {"parse": []}}}


def _presser(interaction: dict[str, Any]) -> tuple[str, str]:
    member = interaction.get("member")
    user = member.get("user") if isinstance(member, dict) else interaction.get("user")
    if not isinstance(user, dict):
        raise Refused("the interaction names no user", 400)
    return text_of(user.get("id")), text_of(user.get("global_name")) or text_of(user.get("username")) or "someone"


def link_form() -> dict[str, Any]:
    """The form an unlinked presser opens: the one-time code from their Notifications page."""
    field = {"type": 4, "custom_id": LINK_FIELD, "label": "Code from your Hook Bridge Notifications page",
             "style": 1, "min_length": 6, "max_length": 16, "required": True}  # fmt: skip
    return {"type": MODAL, "data": {"custom_id": LINK_FORM, "title": "Link your Discord account",
                                    "components": [{"type": discord.ACTION_ROW, "components": [field]}]}}  # fmt: skip


def discord_press(interaction: dict[str, Any], remote_addr: str | None) -> dict[str, Any]:
    """What a button press comes to: the message updated to say who decided, or a word to the presser alone."""
    data, message = interaction.get("data"), interaction.get("message")
    if not isinstance(data, dict) or not isinstance(message, dict):
        raise Refused("a button press without its button or message", 400)
    if data.get("custom_id") == LINK_BUTTON:
        return link_form()
    step_id, choice = presses.read_button(text_of(data.get("custom_id"), 120))
    user_id, name = _presser(interaction)
    where = text_of(interaction.get("channel_id")) or text_of(message.get("channel_id"))
    press = presses.Press(Platform.DISCORD, step_id, choice, user_id, name, where, text_of(message.get("id")))
    try:
        told = presses.decide(press, remote_addr)
    except Refused as refused:
        if refused.status != 403:
            raise
        said = _say(refused.message)
        if "not linked" in refused.message:
            button = {"type": discord.BUTTON, "style": discord.PRIMARY, "label": "Link my account",
                      "custom_id": LINK_BUTTON}  # fmt: skip
            said["data"]["components"] = [{"type": discord.ACTION_ROW, "components": [button]}]
        return said
    question = presses.step_of(press).question
    question.refresh_from_db()
    if question.is_pending:
        return _say(told)  # a vote counted toward the approval's policy: the message stays as it is
    return {"type": UPDATE_MESSAGE, "data": discord.ended(question)}


def discord_link(interaction: dict[str, Any]) -> dict[str, Any]:
    data = interaction.get("data")
    if not isinstance(data, dict) or data.get("custom_id") != LINK_FORM:
        raise Refused("not this server's form", 400)
    rows = data.get("components")
    fields: list[Any] = []
    for row in rows if isinstance(rows, list) else []:
        inner = row.get("components") if isinstance(row, dict) else None
        fields.extend(inner if isinstance(inner, list) else [])
    typed = [text_of(f.get("value"), 40) for f in fields if isinstance(f, dict) and f.get("custom_id") == LINK_FIELD]
    code = typed[0] if typed else ""
    user_id, name = _presser(interaction)
    try:
        account = LinkCode.redeem(Platform.DISCORD, code, user_id, name)
    except ValueError as exc:
        return _say(f"Not linked: {exc}.")
    return _say(f"Linked: your presses here now answer as {account.user.get_username()} in Hook Bridge. Press again.")


@csrf_exempt
@require_POST
async def discord_interactions(request: HttpRequest) -> HttpResponse:
    try:
        interaction = discord_verified(request)
        kind = interaction.get("type")
        if kind == PING:
            return JsonResponse({"type": PONG})
        if kind == COMPONENT:
            answer = await database_sync_to_async(discord_press)(interaction, client_address(request))
        elif kind == MODAL_SUBMIT:
            answer = await database_sync_to_async(discord_link)(interaction)
        else:
            raise Refused(f"type: {kind!r} is no interaction this server takes", 400)
    except Refused as refused:
        return _refused(refused, "Discord")
    return JsonResponse(answer)


# Microsoft Teams

INVOKE = "adaptiveCard/action"
LINK_WORDS = re.compile(r"<at>.*?</at>", re.DOTALL)


def _teams_says(text: str) -> dict[str, Any]:
    return {"statusCode": 200, "type": "application/vnd.microsoft.activity.message", "value": text[:1000]}


def _teams_place(activity: dict[str, Any]) -> tuple[str, str, str]:
    """(the presser's id, their name, the conversation) of an activity: the Entra object id where Teams gives one."""
    sender, conversation = activity.get("from"), activity.get("conversation")
    if not isinstance(sender, dict) or not isinstance(conversation, dict):
        raise Refused("the activity names no sender or conversation", 400)
    user_id = text_of(sender.get("aadObjectId")) or text_of(sender.get("id"))
    # A reply in a channel's thread is the conversation with ";messageid=…" added: the channel's is before it.
    where = text_of(conversation.get("id"), 400).split(";messageid=")[0]
    if not user_id or not where:
        raise Refused("the activity names no sender or conversation", 400)
    return user_id, text_of(sender.get("name")) or "someone", where


def teams_press(activity: dict[str, Any], remote_addr: str | None) -> dict[str, Any]:
    """An Action.Execute from a card of ours: the card as it now stands, or a word to the presser."""
    value = activity.get("value")
    action = value.get("action") if isinstance(value, dict) else None
    data = action.get("data") if isinstance(action, dict) else None
    if not isinstance(data, dict):
        raise Refused("value.action.data: not a button of this server's", 400)
    step_id, choice = presses.read_button(text_of(data.get("hb")))
    user_id, name, where = _teams_place(activity)
    press = presses.Press(Platform.TEAMS, step_id, choice, user_id, name, where, text_of(activity.get("replyToId")))
    try:
        told = presses.decide(press, remote_addr)
    except Refused as refused:
        if refused.status != 403:
            raise
        return _teams_says(refused.message)
    question = presses.step_of(press).question
    question.refresh_from_db()
    if question.is_pending:
        return _teams_says(told)
    return {"statusCode": 200, "type": teams.CARD, "value": teams.ended_card(question)}


def teams_link(activity: dict[str, Any]) -> str:
    """A message `link CODE` to the bot (an @mention of it aside): link its sender; what the bot says back."""
    words = LINK_WORDS.sub(" ", text_of(activity.get("text"), 400)).split()
    if len(words) != 2 or words[0].lower() not in ("link", "/link"):
        return ""
    user_id, name, _ = _teams_place(activity)
    try:
        account = LinkCode.redeem(Platform.TEAMS, words[1], user_id, name)
    except ValueError as exc:
        return f"Not linked: {exc}."
    return f"Linked: your presses here now answer as {account.user.get_username()} in Hook Bridge."


@csrf_exempt
@require_POST
async def teams_messages(request: HttpRequest) -> HttpResponse:
    try:
        if len(request.body) > MAX_BODY:
            raise Refused(f"the body is larger than {MAX_BODY} bytes", 413)
        # The token first: nothing of the body is trusted before it; its service URL is checked against the body's.
        authorization = request.headers.get("Authorization", "")
        if not authorization:
            raise Refused("Authorization: the Bot Framework's bearer token is missing", 401)
        activity = _body(request)
        if not isinstance(activity, dict):
            raise Refused("the activity is not an object", 400)
        await asyncio.to_thread(teams.verified, authorization, text_of(activity.get("serviceUrl"), 400))
        kind = activity.get("type")
        if kind == "invoke" and activity.get("name") == INVOKE:
            return JsonResponse(await database_sync_to_async(teams_press)(activity, client_address(request)))
        if kind == "message":
            said = await database_sync_to_async(teams_link)(activity)
            if said:
                where = text_of((activity.get("conversation") or {}).get("id"), 400)
                try:
                    await asyncio.to_thread(teams.say, where, text_of(activity.get("id"), 400), said)
                except Failed as failed:
                    logger.warning("Could not answer a Teams link message: %s", failed.reason)
    except Refused as refused:
        return _refused(refused, "Teams")
    return HttpResponse(status=200)
