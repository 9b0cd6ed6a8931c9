"""The sessions API: a backend opens a session for an agent run, reads its state, closes it."""

from __future__ import annotations

import json
import uuid

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from hookbridge_site.jsonapi import json_error
from lifecycle.models import AgentSession
from tokens.auth import TokenRequest, token_required
from tokens.models import Scope


def _not_found(guid: object) -> JsonResponse:
    return json_error(f"no session {guid}", status=404)


@csrf_exempt
@require_POST
@token_required(Scope.AGENT)
def session_create(request: TokenRequest) -> JsonResponse:
    try:
        payload = json.loads(request.body or b"{}")
    except ValueError:
        return json_error("is not valid JSON", field="body")
    if not isinstance(payload, dict):
        return json_error("must be a JSON object", field="body")
    fields = {}
    for name in ("name", "project"):
        value = payload.get(name, "")
        if not isinstance(value, str) or len(value) > 200:
            return json_error("must be text of at most 200 characters", field=name)
        fields[name] = value
    session = AgentSession.open(token=request.agent_token, **fields)
    return JsonResponse({"guid": str(session.guid), **session.as_dict()}, status=201)


@csrf_exempt
@require_http_methods(["GET", "DELETE"])
@token_required(Scope.AGENT)
def session_detail(request: HttpRequest, guid: uuid.UUID) -> JsonResponse:
    token = request.agent_token  # type: ignore[attr-defined]
    # Another token's session is answered exactly like an unknown one.
    session = AgentSession.objects.filter(pk=guid, token=token).first()
    if session is None:
        return _not_found(guid)
    if request.method == "DELETE":
        session.close()
    return JsonResponse(session.as_dict())
