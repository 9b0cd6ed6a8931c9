"""The JSON API for bots and integrations: list questions, answer one."""

from __future__ import annotations

import json
import uuid

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from hookbridge_site.jsonapi import json_error
from questions.models import AlreadyResolved, InvalidAnswer, Question, Status
from questions.serializers import question_data
from tokens.auth import TokenRequest, client_address, token_required
from tokens.models import Scope


@require_GET
@token_required(Scope.AGENT, Scope.ANSWER)
def question_list(request: HttpRequest) -> JsonResponse:
    questions = Question.objects.select_related("answer").order_by("created_at")
    status = request.GET.get("status")
    if status:
        if status not in Status.values:
            return json_error(f"must be one of {', '.join(Status.values)}", field="status")
        questions = questions.filter(status=status)
    return JsonResponse({"questions": [question_data(q) for q in questions[:500]]})


@csrf_exempt
@require_POST
@token_required(Scope.ANSWER)
def mcp_answer(request: TokenRequest) -> JsonResponse:
    if len(request.body) > settings.HOOKBRIDGE_MAX_BODY_BYTES:
        return json_error("request body too large", status=413)
    try:
        payload = json.loads(request.body)
    except ValueError:
        return json_error("is not valid JSON", field="body")
    if not isinstance(payload, dict):
        return json_error("must be a JSON object", field="body")
    question_id, answer = payload.get("questionId"), payload.get("answer")
    if not isinstance(question_id, str):
        return json_error("is required and must be a string", field="questionId")
    try:
        pk = uuid.UUID(question_id)
    except ValueError:
        return json_error(f"{question_id!r} is not a question id", field="questionId")
    if not isinstance(answer, str | dict):
        return json_error("is required: text, or an object for structured kinds", field="answer")

    question = Question.objects.filter(pk=pk).first()
    if question is None:
        return json_error(f"no question {question_id}", status=404)
    try:
        question.record_answer(answer, by_token=request.agent_token, source="api", remote_addr=client_address(request))
    except InvalidAnswer as exc:
        return json_error(str(exc), field=exc.field)
    except AlreadyResolved as exc:
        resolved = exc.question
        answered_by = resolved.answer.answered_by if resolved.status == Status.ANSWERED else None
        return json_error(str(exc), status=409, answeredBy=answered_by, question=question_data(resolved))
    question = Question.objects.select_related("answer").get(pk=pk)
    return JsonResponse(question_data(question))


@csrf_exempt
@require_POST
@token_required(Scope.ANSWER)
def dismiss(request: TokenRequest, question_id: uuid.UUID) -> JsonResponse:
    question = Question.objects.filter(pk=question_id).first()
    if question is None:
        return json_error(f"no question {question_id}", status=404)
    try:
        question.dismiss(by=request.agent_token.name)
    except AlreadyResolved as exc:
        return json_error(str(exc), status=409, question=question_data(exc.question))
    return JsonResponse(question_data(question))
