"""The JSON API for bots and integrations: list questions, answer one."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from mcpapi.auth import TokenRequest, client_address, token_required
from mcpapi.models import Scope
from questions.models import AlreadyResolved, InvalidAnswer, Question, Status


def question_json(question: Question) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": str(question.pk),
        "kind": question.kind,
        "question": question.text,
        "options": question.options,
        "payload": question.payload,
        "allowFreeText": question.allow_free_text,
        "asker": question.asker_name,
        "status": question.status,
        "created_at": question.created_at.isoformat(),
        "resolved_at": question.resolved_at.isoformat() if question.resolved_at else None,
    }
    # Whether a call still waits on it: a question whose agent stopped waiting stays answerable
    # until keptUntil, and the agent's re-ask gets the answer.
    data["agentWaiting"] = question.status == Status.PENDING and question.agent_left_at is None
    if question.agent_left_at is not None:
        data["agentLeftAt"] = question.agent_left_at.isoformat()
        data["agentLeftReason"] = question.agent_left_reason
        if question.status == Status.PENDING:
            data["keptUntil"] = question.kept_until.isoformat()
    if question.status == Status.CANCELLED:
        data["cancelReason"] = question.cancel_reason
        if question.dismissed_by:
            data["dismissedBy"] = question.dismissed_by
    answer = getattr(question, "answer", None) if question.status == Status.ANSWERED else None
    data["answer"] = (
        {
            "text": answer.text,
            "data": answer.data,
            "answeredBy": answer.answered_by,
            "answeredAt": answer.created_at.isoformat(),
        }
        if answer
        else None
    )
    return data


def _bad(field: str, message: str) -> JsonResponse:
    return JsonResponse({"error": f"{field}: {message}", "field": field}, status=400)


@require_GET
@token_required(Scope.AGENT, Scope.ANSWER)
def question_list(request: HttpRequest) -> JsonResponse:
    questions = Question.objects.select_related("answer").order_by("created_at")
    status = request.GET.get("status")
    if status:
        if status not in Status.values:
            return _bad("status", f"must be one of {', '.join(Status.values)}")
        questions = questions.filter(status=status)
    return JsonResponse({"questions": [question_json(q) for q in questions[:500]]})


@csrf_exempt
@require_POST
@token_required(Scope.ANSWER)
def mcp_answer(request: TokenRequest) -> JsonResponse:
    if len(request.body) > settings.HOOKBRIDGE_MAX_BODY_BYTES:
        return JsonResponse({"error": "request body too large"}, status=413)
    try:
        payload = json.loads(request.body)
    except ValueError:
        return _bad("body", "is not valid JSON")
    if not isinstance(payload, dict):
        return _bad("body", "must be a JSON object")
    question_id, answer = payload.get("questionId"), payload.get("answer")
    if not isinstance(question_id, str):
        return _bad("questionId", "is required and must be a string")
    try:
        pk = uuid.UUID(question_id)
    except ValueError:
        return _bad("questionId", f"{question_id!r} is not a question id")
    if not isinstance(answer, str | dict):
        return _bad("answer", "is required: text, or an object for structured kinds")

    question = Question.objects.filter(pk=pk).first()
    if question is None:
        return JsonResponse({"error": f"no question {question_id}"}, status=404)
    try:
        question.record_answer(answer, by_token=request.agent_token, source="api", remote_addr=client_address(request))
    except InvalidAnswer as exc:
        return _bad(exc.field, str(exc))
    except AlreadyResolved as exc:
        resolved = exc.question
        answered_by = resolved.answer.answered_by if resolved.status == Status.ANSWERED else None
        return JsonResponse(
            {"error": str(exc), "answeredBy": answered_by, "question": question_json(resolved)}, status=409
        )
    question = Question.objects.select_related("answer").get(pk=pk)
    return JsonResponse(question_json(question))


@csrf_exempt
@require_POST
@token_required(Scope.ANSWER)
def dismiss(request: TokenRequest, question_id: uuid.UUID) -> JsonResponse:
    question = Question.objects.filter(pk=question_id).first()
    if question is None:
        return JsonResponse({"error": f"no question {question_id}"}, status=404)
    try:
        question.dismiss(by=request.agent_token.name)
    except AlreadyResolved as exc:
        return JsonResponse({"error": str(exc), "question": question_json(exc.question)}, status=409)
    return JsonResponse(question_json(question))
