"""Slack's interactivity requests: a button pressed on a question's message (POST /integrations/slack/actions).

Nothing is read from a request before its signature is checked: `X-Slack-Signature` is `v0=` and the
HMAC-SHA256 of `v0:<timestamp>:<raw body>` with the signing secret, and `X-Slack-Request-Timestamp` must be
within five minutes (slack_sdk's SignatureVerifier). A bad or stale signature is a 401, anything else not
understood a 400, with nothing changed and a log line. A press answers the question as the Slack user (the
Hook Bridge person with their e-mail, when there is one), well within Slack's three seconds; a press after
someone else answered is told so, to that user alone. Free text goes through the question's signed link.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from slack_sdk.signature import SignatureVerifier

from core.db import database_sync_to_async
from notify import slack
from notify.models import Delivery
from notify.sending import Failed
from questions.models import AlreadyResolved, InvalidAnswer, Question

logger = logging.getLogger(__name__)


class Refused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def verified_payload(request: HttpRequest) -> dict[str, Any]:
    """The request's payload, once its signature and timestamp hold; Refused otherwise."""
    secret = settings.HOOKBRIDGE_SLACK_SIGNING_SECRET
    if not secret:
        raise Refused(404, "Slack is not set up here (HOOKBRIDGE_SLACK_SIGNING_SECRET)")
    body = request.body
    timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
    signature = request.headers.get("X-Slack-Signature", "")
    if not SignatureVerifier(secret).is_valid(body, timestamp, signature):
        raise Refused(401, "the signature or its timestamp does not hold")
    try:
        payload = json.loads(request.POST["payload"])
    except (KeyError, ValueError):
        raise Refused(400, "no payload, or not JSON") from None
    if not isinstance(payload, dict):
        raise Refused(400, "the payload is not an object")
    return payload


def pressed(payload: dict[str, Any]) -> tuple[uuid.UUID, str, str, str, str]:
    """(question id, the choice, Slack user id, their name, the message's channel) of a button press."""
    if payload.get("type") != "block_actions":
        raise Refused(400, f"not a button press: {payload.get('type')!r}")
    try:
        action = payload["actions"][0]
        value = json.loads(action["value"])
        question_id, choice = uuid.UUID(value["q"]), str(value["c"])
        user = payload["user"]
        user_id, name = str(user["id"]), str(user.get("name") or user.get("username") or "someone")
        channel = str(payload["container"]["channel_id"])
        ts = str(payload["container"]["message_ts"])
        action_id = str(action.get("action_id", ""))
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        raise Refused(400, "not one of this server's answer buttons") from None
    if not action_id.startswith(slack.ACTION):
        raise Refused(400, f"an unknown action: {action_id!r}")
    # Only a message this server posted for that question: not another workspace's, nor a forged value.
    if not Delivery.objects.filter(
        question_id=question_id, channel="slack", slack_channel_id=channel, slack_ts=ts
    ).exists():
        raise Refused(400, "that message is not one this server posted for that question")
    return question_id, choice, user_id, name, channel


def answer(question_id: uuid.UUID, choice: str, email: str, name: str) -> None:
    question = Question.objects.get(pk=question_id)
    person = get_user_model().objects.filter(email__iexact=email).first() if email else None
    by_name = None if person is not None else f"{name} (Slack)"
    if question.kind == "approval":
        decision: dict[str, str] = (
            {"behavior": "allow"}
            if choice == "allow"
            else {"behavior": "deny", "message": f"Denied in Slack by {person or name}."}
        )
        question.record_answer(decision, by_user=person, by_name=by_name, source="slack")
    else:
        question.record_answer(option=choice, by_user=person, by_name=by_name, source="slack")


@csrf_exempt
@require_POST
async def slack_actions(request: HttpRequest) -> HttpResponse:
    try:
        payload = verified_payload(request)
        question_id, choice, user, name, channel = await database_sync_to_async(pressed)(payload)
    except Refused as refused:
        logger.warning("Refused a Slack request: %s", refused.reason)
        return HttpResponse(refused.reason, status=refused.status, content_type="text/plain")
    email = await asyncio.to_thread(slack.email_of, user) if user else ""
    try:
        await database_sync_to_async(answer)(question_id, choice, email, name)
    except AlreadyResolved as exc:
        said = exc.question.status_sentence(to_agent=False)
        try:
            await asyncio.to_thread(slack.tell, channel, user, f"Already decided: {said}")
        except Failed as failed:
            logger.warning("Could not tell %s the question was answered already: %s", user, failed.reason)
    except (Question.DoesNotExist, InvalidAnswer) as exc:
        logger.warning("Refused a Slack answer to %s: %s", question_id, exc)
        return HttpResponse(f"not an answer that question takes: {exc}", status=400, content_type="text/plain")
    # Slack shows nothing for a 200 with no body; the message itself is updated once the answer is in.
    return HttpResponse(status=200)
