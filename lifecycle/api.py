"""The sessions API: a backend opens a session for an agent run, reads its state, closes it."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from core.jsonapi import json_error, object_body
from core.limits import fit, with_list
from lifecycle.forms import MAX_MESSAGE
from lifecycle.models import AgentSession, SessionEvent, SessionMessage, SessionTaken
from tokens.auth import TokenRequest, token_required
from tokens.models import Scope


def _not_found(guid: object) -> JsonResponse:
    return json_error(f"no session {guid}", status=404)


@csrf_exempt
@require_POST
@token_required(Scope.AGENT)
def session_create(request: TokenRequest) -> JsonResponse:
    payload = object_body(request, empty="{}")
    if isinstance(payload, JsonResponse):
        return payload
    fields = {}
    for name in ("name", "project"):
        value = payload.get(name, "")
        if not isinstance(value, str) or len(value) > 200:
            return json_error("must be text of at most 200 characters", field=name)
        fields[name] = value
    chosen = payload.get("guid")
    if chosen is None:
        session = AgentSession.open(token=request.agent_token, **fields)
        return JsonResponse(session.as_dict(), status=201)
    try:
        guid = uuid.UUID(chosen) if isinstance(chosen, str) else None
    except ValueError:
        guid = None
    if guid is None:
        return json_error("must be a UUID, such as 0f8fad5b-d9cb-469f-a165-70867728950e", field="guid")
    try:
        session, created = AgentSession.open_as(guid, token=request.agent_token, **fields)
    except SessionTaken:
        # Says no more than that: whose it is, and what it holds, stay with its token.
        return json_error(f"session {guid} already exists for another token", status=409, field="guid")
    # The same token repeating the call (a retry) gets the session it already has.
    return JsonResponse(session.as_dict(), status=201 if created else 200)


EVENTS_PAGE, MAX_EVENTS_PAGE = 50, 500


@csrf_exempt
@require_http_methods(["GET", "HEAD", "DELETE"])
@token_required(Scope.AGENT, Scope.ANSWER)
def session_detail(request: TokenRequest, guid: uuid.UUID) -> HttpResponse:
    """The session's state and its events, newest first, a page at a time (`events_before`, `events_limit`)."""
    token = request.agent_token
    session = AgentSession.objects.filter(pk=guid).first()
    # Another agent's session is answered exactly like an unknown one; answering tokens read them all.
    if session is None or not session.readable_by(token):
        return _not_found(guid)
    if request.method == "DELETE":
        if session.token_id != token.pk:
            return json_error("only the token that opened a session can close it", status=403)
        session.close()
    raw_limit = request.GET.get("events_limit", str(EVENTS_PAGE))
    if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= MAX_EVENTS_PAGE:
        return json_error(f"must be a whole number from 1 to {MAX_EVENTS_PAGE}", field="events_limit")
    limit = int(raw_limit)
    events = session.events.order_by("-created_at", "-id")
    before = request.GET.get("events_before")
    if before:
        if not before.isdigit():
            return json_error("must be the id of an event this API gave", field="events_before")
        events = events.filter(id__lt=int(before))
    page = list(events[: limit + 1])
    # A page also ends before it would pass one message's size.
    shown, taken = fit(page[:limit], lambda event: json.dumps(event_data(event), cls=DjangoJSONEncoder))
    body = session.as_dict()
    body["eventsNext"] = None
    if len(page) > taken:
        query = request.GET.copy()
        query["events_before"] = str(page[taken - 1].pk)
        body["eventsNext"] = f"{request.path}?{query.urlencode()}"
    text = with_list(json.dumps(body, cls=DjangoJSONEncoder), "events", shown)
    return HttpResponse(text, content_type="application/json")


def event_data(event: SessionEvent) -> dict[str, Any]:
    return {"id": event.pk, **event.message()}


@csrf_exempt
@require_POST
@token_required(Scope.ANSWER)
def session_message(request: TokenRequest, guid: uuid.UUID) -> JsonResponse:
    """A message to the session's agent, as from the session page: handed over once, at its next PostToolUse or Stop."""
    session = AgentSession.objects.filter(pk=guid).first()
    if session is None or not session.readable_by(request.agent_token):
        return _not_found(guid)
    payload = object_body(request)
    if isinstance(payload, JsonResponse):
        return payload
    text = payload.get("text")
    if not isinstance(text, str) or not text.strip():
        return json_error("must be the message, as non-empty text", field="text")
    if len(text) > MAX_MESSAGE:
        return json_error(f"must be at most {MAX_MESSAGE} characters", field="text")
    if not session.takes_messages:
        said = "this session's agent cannot be messaged: it is over, or its host has no hooks here"
        return json_error(said, status=409, field="guid")
    message = SessionMessage.send(session, text.strip(), by=request.agent_token.name)
    return JsonResponse(
        {"id": message.pk, "session": str(session.pk), "text": message.text, "sentBy": message.sent_by,
         "createdAt": message.created_at.isoformat(), "deliveredAt": None},
        status=201,
    )  # fmt: skip
