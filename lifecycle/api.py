"""The sessions API: a backend opens a session for an agent run, reads its state, closes it."""

from __future__ import annotations

import uuid

from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from hookbridge_site.jsonapi import json_error, object_body
from lifecycle.models import AgentSession, SessionTaken
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


@csrf_exempt
@require_http_methods(["GET", "DELETE"])
@token_required(Scope.AGENT, Scope.ANSWER)
def session_detail(request: TokenRequest, guid: uuid.UUID) -> JsonResponse:
    token = request.agent_token
    session = AgentSession.objects.filter(pk=guid).first()
    # Another agent's session is answered exactly like an unknown one; answering tokens read them all.
    if session is None or not session.readable_by(token):
        return _not_found(guid)
    if request.method == "DELETE":
        if session.token_id != token.pk:
            return json_error("only the token that opened a session can close it", status=403)
        session.close()
    return JsonResponse(session.as_dict())
