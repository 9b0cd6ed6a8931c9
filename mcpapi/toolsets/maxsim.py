"""The default set: ask a question, keep waiting on one, report lifecycle events, read status."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from django.conf import settings
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from core.db import database_sync_to_async
from lifecycle import reporting
from lifecycle.models import EventType, LifecycleEvent
from mcpapi.asking import ask_and_wait, caller, json_result, wait, waiting_slot
from mcpapi.toolsets.entries import Toolset
from questions.models import Kind, Question, Status

# The largest integer every database's integer column holds (PostgreSQL's is 32 bits).
MAX_STORED_INT = 2**31 - 1


class Option(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: StrictStr = Field(min_length=1, max_length=200, description="What the answer will be if chosen.")
    label: StrictStr = Field(min_length=1, max_length=200, description="What the person sees on the button.")
    description: StrictStr | None = Field(default=None, max_length=2000)


async def ask_question(
    question: Annotated[
        StrictStr,
        Field(
            min_length=1,
            max_length=settings.HOOKBRIDGE_MAX_QUESTION_LENGTH,
            description="The question, in markdown. Give the person the context they need to answer.",
        ),
    ],
    ctx: Context,
    options: Annotated[
        list[Option] | None,
        Field(
            max_length=settings.HOOKBRIDGE_MAX_OPTIONS,
            description="Choices shown as buttons; the answer is the chosen option's value.",
        ),
    ] = None,
    allow_free_text: Annotated[
        StrictBool, Field(description="Whether the person may type an answer besides the options.")
    ] = True,
) -> CallToolResult:
    """Ask a person on your team a question and wait for the answer.

    Use it when you need a human decision, a missing fact or an approval. Blocks
    until someone answers on the Hook Bridge dashboard. The result is
    {"answer": "..."}; if it is {"status": "pending", "questionId": ...} instead,
    call wait_for_answer with that id to keep waiting.
    """
    option_dicts = [option.model_dump(exclude_none=True) for option in options or []]
    values = [option["value"] for option in option_dicts]
    if len(set(values)) != len(values):
        raise ToolError("options: every option needs a distinct value")
    if not allow_free_text and not option_dicts:
        raise ToolError("allow_free_text: false needs at least one option to choose from")
    return await ask_and_wait(
        ctx,
        tool="ask_question",
        kind=Kind.QUESTION,
        text=question,
        options=option_dicts,
        allow_free_text=allow_free_text,
        timeout=settings.HOOKBRIDGE_QUESTION_TIMEOUT,
    )


async def wait_for_answer(
    question_id: Annotated[StrictStr, Field(description="The questionId from a 'pending' result.")],
    ctx: Context,
) -> CallToolResult:
    """Keep waiting for a person's answer to a question an earlier call left pending."""
    try:
        pk = uuid.UUID(question_id)
    except ValueError:
        raise ToolError(f"question_id: {question_id!r} is not a question id") from None
    asker, _ = caller()

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
                payload=question.payload,
                timeout_seconds=question.timeout_seconds,
            )
        return question

    with waiting_slot(asker):
        question = await load()
        if question is None:
            raise ToolError(f"question_id: no question {question_id} was asked with this token")
        return await wait(question, ctx, asker, "wait_for_answer")


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
    step: Annotated[StrictInt | None, Field(ge=0, le=MAX_STORED_INT)] = None,
    total_steps: Annotated[StrictInt | None, Field(ge=1, le=MAX_STORED_INT)] = None,
) -> CallToolResult:
    """Report where you are (phase, plan, task, verification); shown live on the dashboard."""
    if step is not None and total_steps is not None and step > total_steps:
        raise ToolError(f"step: {step} is more than total_steps ({total_steps})")
    asker, asker_name = caller()
    await reporting.record(
        asker=asker,
        asker_name=asker_name,
        event_type=EventType(event_type),
        phase_name=phase_name or "",
        phase_number=phase_number or "",
        step=step,
        total_steps=total_steps,
    )
    return json_result({"status": "ok"})


async def get_phase_status() -> CallToolResult:
    """How many of your questions are waiting for a person, and your last lifecycle event."""
    asker, asker_name = caller()
    # Only the caller's own work: another agent's phase names and queue are not this agent's business.
    mine: dict[str, object] = {"asker_id": asker.pk} if asker is not None else {"asker": None, "asker_name": asker_name}

    @database_sync_to_async
    def read() -> dict[str, Any]:
        latest = LifecycleEvent.latest(**mine)
        return {
            "pendingQuestions": Question.objects.pending().filter(**mine).count(),
            "lastLifecycleEvent": latest.as_submitted() if latest else None,
        }

    return json_result(await read())


TOOLSET = Toolset(
    name="maxsim",
    tools=(
        ask_question,
        wait_for_answer,
        submit_lifecycle_event,
        get_phase_status,
    ),
    asks=True,
    asking=frozenset({"ask_question"}),
    instructions=(
        "ask_question {waits} a person on your team answers on the dashboard. Report where you are with "
        "submit_lifecycle_event; get_phase_status says how many questions are waiting."
    ),
)
