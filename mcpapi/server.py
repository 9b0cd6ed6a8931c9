"""The Hook Bridge MCP server: tools agents call, served stateless over SSE at /mcp."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Annotated, Any, Literal

from channels.db import database_sync_to_async
from django.conf import settings
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from lifecycle.models import EventType, LifecycleEvent
from mcpapi import calls
from mcpapi.models import AgentToken, digest
from questions.models import Question, Status
from questions.waiting import WaitPolicy, wait_for_resolution

logger = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Hook Bridge connects you to the people on your team. Call ask_question when you need a "
    "decision, a missing fact or an approval: it blocks until someone answers on the dashboard. "
    "If it returns status 'pending', call wait_for_answer with the questionId to keep waiting. "
    "Report where you are with submit_lifecycle_event."
)


class Option(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: StrictStr = Field(min_length=1, max_length=200, description="What the answer will be if chosen.")
    label: StrictStr = Field(min_length=1, max_length=200, description="What the person sees on the button.")
    description: StrictStr | None = Field(default=None, max_length=2000)


class TokenVerifier:
    """Bearer tokens are AgentToken rows, looked up by digest."""

    async def verify_token(self, token: str) -> AccessToken | None:
        agent = await database_sync_to_async(AgentToken.authenticate)(token)
        if agent is None:
            return None
        # The digest, not the raw token: nothing downstream needs the secret.
        return AccessToken(
            token=digest(token), client_id=str(agent.pk), scopes=[], claims={"name": agent.name}
        )


def _caller() -> tuple[AgentToken | None, str]:
    access = get_access_token()
    if access is None:
        # Only reachable without HTTP auth (in-process tests, stdio later).
        return None, "local agent"
    name = str((access.claims or {}).get("name", access.client_id))
    return AgentToken(pk=int(access.client_id), name=name), name


def _has_progress_token(ctx: Context) -> bool:
    meta = ctx.request_context.meta or {}
    return meta.get("progress_token") is not None or meta.get("progressToken") is not None


def _json_result(payload: dict[str, Any], *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
        is_error=is_error,
    )


def _outcome(question: Question) -> CallToolResult:
    qid = str(question.pk)
    if question.status == Status.ANSWERED:
        return _json_result({"answer": question.answer.text})
    if question.status == Status.PENDING:
        return _json_result(
            {
                "status": "pending",
                "questionId": qid,
                "message": (
                    f"No answer yet; question {qid} is still pending on the dashboard "
                    f"({settings.HOOKBRIDGE_PUBLIC_URL}/). Nothing is lost: call wait_for_answer "
                    f'with question_id="{qid}" to keep waiting.'
                ),
            }
        )
    if question.status == Status.TIMED_OUT:
        return _json_result(
            {
                "status": "timed_out",
                "questionId": qid,
                "message": (
                    f"No answer came in time: question {qid} timed out. Proceed on your own judgement."
                ),
            },
            is_error=True,
        )
    return _json_result(
        {
            "status": "cancelled",
            "questionId": qid,
            "message": f"Question {qid} was cancelled ({question.get_cancel_reason_display().lower()}).",
        },
        is_error=True,
    )


async def _wait(question: Question, ctx: Context, asker: AgentToken | None) -> CallToolResult:
    with_progress = _has_progress_token(ctx)

    async def progress(elapsed: float, message: str) -> None:
        await ctx.report_progress(elapsed, None, message)

    extra_groups = (calls.call_group(asker.pk, ctx.request_id),) if asker is not None else ()
    final = await wait_for_resolution(
        question.pk,
        WaitPolicy.from_settings(with_progress=with_progress),
        progress=progress if with_progress else None,
        extra_groups=extra_groups,
    )
    if final.status != Status.PENDING:
        await database_sync_to_async(final.mark_delivered)()
    return _outcome(final)


QuestionText = Annotated[
    StrictStr,
    Field(
        min_length=1,
        max_length=settings.HOOKBRIDGE_MAX_QUESTION_LENGTH,
        description="The question, in markdown. Give the person the context they need to answer.",
    ),
]
Options = Annotated[
    list[Option] | None,
    Field(
        max_length=settings.HOOKBRIDGE_MAX_OPTIONS,
        description="Choices shown as buttons; the answer is the chosen option's value.",
    ),
]


async def ask_question(
    question: QuestionText,
    ctx: Context,
    options: Options = None,
    allow_free_text: Annotated[
        StrictBool, Field(description="Whether the person may type an answer besides the options.")
    ] = True,
) -> CallToolResult:
    """Ask the people on your team a question and wait for their answer.

    Blocks until someone answers on the Hook Bridge dashboard. The result is
    {"answer": "..."}; if it is {"status": "pending", "questionId": ...} instead,
    call wait_for_answer with that id to keep waiting.
    """
    option_dicts = [option.model_dump(exclude_none=True) for option in options or []]
    values = [option["value"] for option in option_dicts]
    if len(set(values)) != len(values):
        raise ToolError("options: every option needs a distinct value")
    if not allow_free_text and not option_dicts:
        raise ToolError("allow_free_text: false needs at least one option to choose from")
    asker, asker_name = _caller()
    record, reattached = await database_sync_to_async(Question.ask)(
        asker=asker,
        asker_name=asker_name,
        text=question,
        options=option_dicts,
        allow_free_text=allow_free_text,
    )
    logger.info("Question %s from %s (%s)", record.pk, asker_name, "re-attached" if reattached else "new")
    return await _wait(record, ctx, asker)


async def wait_for_answer(
    question_id: Annotated[StrictStr, Field(description="The questionId from a 'pending' result.")],
    ctx: Context,
) -> CallToolResult:
    """Keep waiting for the answer to a question an earlier call left pending."""
    try:
        pk = uuid.UUID(question_id)
    except ValueError:
        raise ToolError(f"question_id: {question_id!r} is not a question id") from None
    asker, _ = _caller()

    @database_sync_to_async
    def load() -> Question | None:
        question = Question.objects.filter(pk=pk, asker_id=asker.pk if asker else None).first()
        if question is not None and question.status == Status.CANCELLED:
            # Re-attach through ask(): a question cancelled by a disconnect comes back.
            question, _ = Question.ask(
                asker=asker,
                asker_name=question.asker_name,
                text=question.text,
                options=question.options,
                allow_free_text=question.allow_free_text,
                kind=question.kind,
            )
        return question

    question = await load()
    if question is None:
        raise ToolError(f"question_id: no question {question_id} was asked with this token")
    return await _wait(question, ctx, asker)


async def submit_lifecycle_event(
    event_type: Annotated[
        Literal[
            "phase-started",
            "phase-completed",
            "plan-started",
            "plan-completed",
            "task-started",
            "task-completed",
            "verification-started",
            "verification-completed",
        ],
        Field(description="What just happened."),
    ],
    phase_name: Annotated[StrictStr | None, Field(max_length=200)] = None,
    phase_number: Annotated[StrictStr | None, Field(max_length=32)] = None,
    step: Annotated[StrictInt | None, Field(ge=0)] = None,
    total_steps: Annotated[StrictInt | None, Field(ge=1)] = None,
) -> CallToolResult:
    """Report where you are (phase, plan, task, verification); shown live on the dashboard."""
    if step is not None and total_steps is not None and step > total_steps:
        raise ToolError(f"step: {step} is more than total_steps ({total_steps})")
    asker, asker_name = _caller()
    await database_sync_to_async(LifecycleEvent.record)(
        asker=asker,
        asker_name=asker_name,
        event_type=EventType(event_type),
        phase_name=phase_name or "",
        phase_number=phase_number or "",
        step=step,
        total_steps=total_steps,
    )
    return _json_result({"status": "ok"})


async def get_phase_status() -> CallToolResult:
    """How many questions are waiting for a person, and the last lifecycle event."""

    @database_sync_to_async
    def read() -> dict[str, Any]:
        latest = LifecycleEvent.latest()
        return {
            "pendingQuestions": Question.objects.pending().count(),
            "lastLifecycleEvent": latest.as_dict() if latest else None,
        }

    return _json_result(await read())


def build_server() -> MCPServer:
    server: MCPServer = MCPServer(
        "hookbridge",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        token_verifier=TokenVerifier(),
        auth=AuthSettings(issuer_url=settings.HOOKBRIDGE_PUBLIC_URL, resource_server_url=None),
        log_level="WARNING",
    )
    for tool in (ask_question, wait_for_answer, submit_lifecycle_event, get_phase_status):
        server.add_tool(tool)
    return server


def build_http_app() -> tuple[Any, Any]:
    server = build_server()
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=False,
        max_request_body_size=settings.HOOKBRIDGE_MAX_BODY_BYTES,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=settings.HOOKBRIDGE_MCP_ALLOWED_HOSTS,
            allowed_origins=settings.HOOKBRIDGE_MCP_ALLOWED_ORIGINS,
        ),
    )
    return app, server.session_manager
