"""The JSON API for bots and integrations: list questions, answer one."""

from __future__ import annotations

import json
import uuid

from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Q
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST, require_safe

from core.jsonapi import json_error, object_body
from core.limits import fit, with_list
from projects import access
from questions import images
from questions.models import AlreadyResolved, InvalidAnswer, NotDecided, Question, Status, VoteCounted
from questions.queue import decode_cursor, encode_cursor
from questions.serializers import question_data
from tokens.auth import TokenRequest, client_address, token_required
from tokens.models import Scope

PAGE_SIZE, MAX_PAGE_SIZE = 100, 500


@require_safe
@token_required(Scope.AGENT, Scope.ANSWER)
def question_list(request: TokenRequest) -> HttpResponse:
    """Newest first, a page at a time: an agent token sees its own questions, an answer token all of them.

    `next` is the URL of the following page (the same filters and a cursor), null on the last one.
    """
    # A token sees its project's questions (a token for every project, all of them); an agent's, only its own.
    questions = access.of_token(request.agent_token).visible(Question.objects.all())
    questions = questions.select_related("answer").order_by("-created_at", "-pk")
    if request.agent_token.scope == Scope.AGENT:
        questions = questions.filter(asker=request.agent_token)
    status = request.GET.get("status")
    if status:
        if status not in Status.values:
            return json_error(f"must be one of {', '.join(Status.values)}", field="status")
        questions = questions.filter(status=status)
    raw_limit = request.GET.get("limit", str(PAGE_SIZE))
    if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= MAX_PAGE_SIZE:
        return json_error(f"must be a whole number from 1 to {MAX_PAGE_SIZE}", field="limit")
    limit = int(raw_limit)
    cursor = request.GET.get("cursor")
    if cursor:
        after = decode_cursor(cursor)
        if after is None:
            return json_error("is not a cursor this API gave; start again without it", field="cursor")
        created_at, pk = after
        questions = questions.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, pk__lt=pk))
    page = list(questions[: limit + 1])
    # A page also ends where the next question would take it past one message's size.
    rendered, taken = fit(page[:limit], lambda question: json.dumps(question_data(question), cls=DjangoJSONEncoder))
    next_url = None
    if len(page) > taken:
        query = request.GET.copy()
        query["cursor"] = encode_cursor(page[taken - 1])
        next_url = f"{request.path}?{query.urlencode()}"
    return HttpResponse(
        with_list(json.dumps({"next": next_url}), "questions", rendered), content_type="application/json"
    )


@csrf_exempt
@require_POST
@token_required(Scope.ANSWER)
def mcp_answer(request: TokenRequest) -> JsonResponse:
    # An answer may carry images, in base64: its body may be as large as they are.
    named = "HOOKBRIDGE_MAX_BODY_BYTES with HOOKBRIDGE_MAX_IMAGES times HOOKBRIDGE_MAX_IMAGE_BYTES"
    payload = object_body(request, limit=images.answer_body_limit(), limit_named=named)
    if isinstance(payload, JsonResponse):
        return payload
    question_id, answer = payload.get("questionId"), payload.get("answer")
    if not isinstance(question_id, str):
        return json_error("is required and must be a string", field="questionId")
    try:
        pk = uuid.UUID(question_id)
    except ValueError:
        return json_error(f"{question_id!r} is not a question id", field="questionId")
    if not isinstance(answer, str | dict):
        return json_error("is required: text, or an object for structured kinds", field="answer")

    # Another project's question is unknown here, exactly like one that never was.
    question = access.of_token(request.agent_token).visible(Question.objects.all()).filter(pk=pk).first()
    if question is None:
        return json_error(f"no question {question_id}", status=404)
    break_glass = payload.get("breakGlass", "")
    if not isinstance(break_glass, str):
        return json_error("must be text: why you decide alone past the approval's policy", field="breakGlass")
    try:
        given = images.from_json(payload.get("images"))
        question.record_answer(
            answer,
            by_token=request.agent_token,
            source="api",
            remote_addr=client_address(request),
            images=given,
            break_glass=break_glass.strip(),
        )
    except VoteCounted as exc:
        # Counted, not yet enough: the approval waits for the rest of its policy's people.
        return JsonResponse(
            {
                "status": "pending",
                "decided": len(exc.decided_by),
                "needed": exc.needed,
                "decidedBy": exc.decided_by,
                "message": str(exc),
            },
            status=202,
        )
    except NotDecided as exc:
        return json_error(str(exc), status=exc.status, field=exc.field)
    except InvalidAnswer as exc:
        return json_error(str(exc), field=exc.field)
    except AlreadyResolved as exc:
        resolved = exc.question
        answered_by = resolved.answer.answered_by if resolved.status == Status.ANSWERED else None
        return json_error(str(exc), status=409, answeredBy=answered_by, question=question_data(resolved))
    # No re-read: record_answer leaves the question as written, its answer attached.
    return JsonResponse(question_data(question))


@csrf_exempt
@require_POST
@token_required(Scope.ANSWER)
def dismiss(request: TokenRequest, question_id: uuid.UUID) -> JsonResponse:
    question = access.of_token(request.agent_token).visible(Question.objects.all()).filter(pk=question_id).first()
    if question is None:
        return json_error(f"no question {question_id}", status=404)
    try:
        question.dismiss(by=request.agent_token.name)
    except AlreadyResolved as exc:
        return json_error(str(exc), status=409, question=question_data(exc.question))
    return JsonResponse(question_data(question))
