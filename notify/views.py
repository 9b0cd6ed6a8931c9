"""Slack's interactivity requests: a button pressed on a question's message (POST /integrations/slack/actions).

Nothing is read from a request before its signature is checked: `X-Slack-Signature` is `v0=` and the
HMAC-SHA256 of `v0:<timestamp>:<raw body>` with the signing secret, and `X-Slack-Request-Timestamp` must be
within five minutes (slack_sdk's SignatureVerifier). A bad or stale signature is a 401, anything else not
understood a 400, with nothing changed and a log line (never a 500: a malformed timestamp or a payload
nested past MAX_NESTING is refused before it is parsed). A press answers the question as the Hook Bridge
person with the Slack user's e-mail, if they may answer the question's project, well within Slack's three
seconds; anyone else is told, to them alone, that they may not (HOOKBRIDGE_SLACK_CHANNEL_DECIDES lets the
channel's membership decide instead). A press after someone else answered is told so, to that user alone.
Free text goes through the question's signed link.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from slack_sdk.signature import SignatureVerifier

from core.db import database_sync_to_async
from core.errors import Refused
from notify import slack
from notify.models import Delivery
from notify.sending import Failed
from projects import access
from projects.models import Project
from questions.decisions import Decision
from questions.models import AlreadyResolved, InvalidAnswer, NotDecided, Question

logger = logging.getLogger(__name__)


# Slack's payloads nest a few levels (blocks in a message in a container); far past this is no button press,
# and Python's JSON parser would recurse into it until it fails.
MAX_NESTING = 64
TIMESTAMP = re.compile(r"[0-9]{1,12}")


def too_deep(text: str, limit: int) -> bool:
    """Whether JSON `text` opens more than `limit` arrays or objects inside one another (strings aside)."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


class NotAllowed(Exception):
    """The person pressing may not answer this question: they are told so, to them alone."""


def verified_payload(request: HttpRequest) -> dict[str, Any]:
    """The request's payload, once its signature and timestamp hold; Refused otherwise."""
    secret = settings.HOOKBRIDGE_SLACK_SIGNING_SECRET
    if not secret:
        raise Refused("Slack is not set up here (HOOKBRIDGE_SLACK_SIGNING_SECRET)", 404)
    body = request.body
    timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
    signature = request.headers.get("X-Slack-Signature", "")
    # slack_sdk's verifier reads the timestamp with int(): anything but a few digits is refused before it.
    if not TIMESTAMP.fullmatch(timestamp):
        raise Refused("X-Slack-Request-Timestamp: not a Unix time in seconds", 401)
    if not SignatureVerifier(secret).is_valid(body, timestamp, signature):
        raise Refused("the signature or its timestamp does not hold", 401)
    try:
        raw = request.POST["payload"]
    except KeyError:
        raise Refused("no payload", 400) from None
    if too_deep(raw, MAX_NESTING):
        raise Refused(f"the payload nests deeper than {MAX_NESTING} levels", 400)
    try:
        payload = json.loads(raw)
    except ValueError:
        raise Refused("the payload is not JSON", 400) from None
    if not isinstance(payload, dict):
        raise Refused("the payload is not an object", 400)
    return payload


def pressed(payload: dict[str, Any]) -> tuple[uuid.UUID, str, str, str, str]:
    """(question id, the choice, Slack user id, their name, the message's channel) of a button press."""
    if payload.get("type") != "block_actions":
        raise Refused(f"not a button press: {payload.get('type')!r}", 400)
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
        raise Refused("not one of this server's answer buttons", 400) from None
    if not action_id.startswith(slack.ACTION):
        raise Refused(f"an unknown action: {action_id!r}", 400)
    # Only a message this server posted for that question: not another workspace's, nor a forged value.
    if not Delivery.objects.filter(question_id=question_id, channel="slack", posted_in=channel, posted_id=ts).exists():
        raise Refused("that message is not one this server posted for that question", 400)
    return question_id, choice, user_id, name, channel


def answerer(question: Question, email: str) -> Any:
    """The Hook Bridge person a press answers as; NotAllowed when they may not answer the question's project.

    By their Slack e-mail. With HOOKBRIDGE_SLACK_CHANNEL_DECIDES, anyone in the channel may (None: as themselves).
    """
    person = get_user_model().objects.filter(email__iexact=email, is_active=True).first() if email else None
    if settings.HOOKBRIDGE_SLACK_CHANNEL_DECIDES:
        return person
    if person is None:
        raise NotAllowed(
            "Your Slack account's e-mail is not a Hook Bridge person's, so this button cannot answer for you: "
            "answer on the dashboard, or ask an admin to give your account that e-mail."
        )
    if not access.of_user(person).may_answer(question.project_id):
        project = Project.objects.filter(pk=question.project_id).values_list("name", flat=True).first()
        raise NotAllowed(f"You may not answer questions of project {project} (it needs the answerer role).")
    return person


def answer(question_id: uuid.UUID, choice: str, email: str, name: str) -> None:
    question = Question.objects.get(pk=question_id)
    person = answerer(question, email)
    by_name = None if person is not None else f"{name} (Slack)"
    if question.kind == "approval":
        decision = Decision.allow() if choice == "allow" else Decision.deny(f"Denied in Slack by {person or name}.")
        question.record_answer(decision.as_dict(), by_user=person, by_name=by_name, source="slack")
    else:
        question.record_answer(option=choice, by_user=person, by_name=by_name, source="slack")


@csrf_exempt
@require_POST
async def slack_actions(request: HttpRequest) -> HttpResponse:
    try:
        payload = verified_payload(request)
        question_id, choice, user, name, channel = await database_sync_to_async(pressed)(payload)
    except Refused as refused:
        logger.warning("Refused a Slack request: %s", refused.message)
        return HttpResponse(refused.message, status=refused.status, content_type="text/plain")
    email = await asyncio.to_thread(slack.email_of, user) if user else ""
    try:
        await database_sync_to_async(answer)(question_id, choice, email, name)
    except AlreadyResolved as exc:
        said = exc.question.status_sentence(to_agent=False)
        try:
            await asyncio.to_thread(slack.tell, channel, user, f"Already decided: {said}")
        except Failed as failed:
            logger.warning("Could not tell %s the question was answered already: %s", user, failed.reason)
    except NotDecided as exc:
        # Counted toward the approval's policy and waiting for more people, or refused by it: said to them alone.
        try:
            await asyncio.to_thread(slack.tell, channel, user, str(exc))
        except Failed as failed:
            logger.warning("Could not tell %s how their vote went: %s", user, failed.reason)
    except NotAllowed as refused:
        logger.warning("A Slack press on %s may not answer it: %s", question_id, refused)
        try:
            await asyncio.to_thread(slack.tell, channel, user, str(refused))
        except Failed as failed:
            logger.warning("Could not tell %s they may not answer: %s", user, failed.reason)
    except (Question.DoesNotExist, InvalidAnswer) as exc:
        logger.warning("Refused a Slack answer to %s: %s", question_id, exc)
        return HttpResponse(f"not an answer that question takes: {exc}", status=400, content_type="text/plain")
    # Slack shows nothing for a 200 with no body; the message itself is updated once the answer is in.
    return HttpResponse(status=200)
