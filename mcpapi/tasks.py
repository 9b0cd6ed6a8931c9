"""Questions served as MCP tasks: the Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663).

A 2026-07-28 client that declares the extension on a tools/call may be answered at once with a task handle
instead of a call held open until a person answers: the question is written, the agent goes on working and
polls tasks/get, and the outcome outlives its session (the rows are the truth, so any worker, and a restarted
one, answers the poll). When is the team's choice (HOOKBRIDGE_TASKS): Claude Code hands a task's result to its
model as a notice that is not the user's consent, so approvals never go to the background.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.utils import timezone
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent
from mcp_types import CLIENT_CAPABILITIES_META_KEY, INVALID_PARAMS, CallToolRequestParams, RequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

from core.db import database_sync_to_async
from mcpapi import asking, calls
from mcpapi.models import AskTask
from notify import steps
from questions import wording
from questions.models import AnswerImage, Status

logger = logging.getLogger(__name__)

EXTENSION = "io.modelcontextprotocol/tasks"
# A person takes minutes; Claude Code polls every second whatever this says, other clients may listen.
POLL_INTERVAL_MS = 2000


class TaskParams(RequestParams):
    task_id: str = Field(min_length=1, max_length=64)


class UpdateTaskParams(TaskParams):
    input_responses: dict[str, Any]


def declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this very request declares the extension: a client that did not is never sent a task."""
    meta = (ctx.params or {}).get("_meta") or {}
    capabilities = meta.get(CLIENT_CAPABILITIES_META_KEY) if isinstance(meta, dict) else None
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and EXTENSION in extensions


def wanted(ctx: ServerRequestContext[Any, Any]) -> bool:
    return settings.HOOKBRIDGE_TASKS == "auto" and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and declared(ctx)


def _owner() -> int | None:
    access = get_access_token()
    return int(access.client_id) if access is not None else None


def _unknown(task_id: str) -> MCPError:
    # The same words for another token's task and a made-up id: nobody learns that a task exists.
    return MCPError(INVALID_PARAMS, f"taskId: no task {task_id!r} of yours here")


def _iso(moment: Any) -> str:
    return str(moment.isoformat().replace("+00:00", "Z"))


def _state(task: AskTask) -> dict[str, Any]:
    """The task's state as tasks/get and the handle give it, except a completed task's result."""
    question = task.question
    if question.status == Status.PENDING and question.deadline is not None and question.deadline <= timezone.now():
        question.time_out()  # nobody waits to time it out: the poll does
    state: dict[str, Any] = {
        "taskId": task.pk,
        "createdAt": _iso(task.created_at),
        "lastUpdatedAt": _iso(task.last_updated_at()),
        "ttlMs": task.ttl_ms(),
        "pollIntervalMs": POLL_INTERVAL_MS,
    }
    if question.status == Status.PENDING:
        state["status"] = "working"
        state["statusMessage"] = waiting_words(task)
    elif question.status == Status.CANCELLED:
        state["status"] = "cancelled"
        state["statusMessage"] = question.status_sentence(to_agent=True)
    else:
        # Answered, or timed out: the result the blocking call would have returned (a timeout is its isError).
        state["status"] = "completed"
    return state


def waiting_words(task: AskTask) -> str:
    """What the agent is told while a person has not answered: where the question is, and who is asked next."""
    where = f"Waiting for a person: the question is on the dashboard at {asking.question_url(task.question_id)}"
    line = steps.line(task.question_id)
    return f"{where}. {line}." if line else f"{where}."


async def _read(task_id: str) -> tuple[dict[str, Any], AskTask]:
    owner = _owner()

    def read() -> tuple[dict[str, Any], AskTask] | None:
        task = AskTask.owned(task_id, owner)
        return None if task is None else (_state(task), task)

    found: tuple[dict[str, Any], AskTask] | None = await database_sync_to_async(read)()
    if found is None:
        raise _unknown(task_id)
    return found


async def get(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
    state, task = await _read(params.task_id)
    if state["status"] != "completed":
        return state
    question = task.question
    images: list[AnswerImage] = []
    if question.status == Status.ANSWERED and question.answer.image_count:
        images = await database_sync_to_async(AnswerImage.objects.for_question)(question.pk)
    result = asking.outcome(question, task.tool, can_wait_for_answer=False, images=images)
    if question.status == Status.ANSWERED:
        when = timezone.localtime(question.answer.created_at).strftime("%H:%M")
        result.content.append(TextContent(type="text", text=wording.answered_how(question, when)))
        await database_sync_to_async(question.mark_delivered)()
    state["result"] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return state


async def cancel(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
    """Withdraw the question everywhere; a task already ended stays as it ended (the spec's cooperative cancel)."""
    _, task = await _read(params.task_id)
    await database_sync_to_async(task.cancel)()
    return {}


async def update(ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams) -> HandlerResult:
    await _read(params.task_id)
    for key in params.input_responses:
        # Nothing is asked of the client yet: a person answers on the dashboard, in Slack or through a link.
        raise MCPError(INVALID_PARAMS, f"inputResponses.{key}: this task asks for no input")
    return {}


class TasksExtension(Extension):
    identifier = EXTENSION

    def methods(self) -> list[MethodBinding]:
        modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        return [
            MethodBinding("tasks/get", TaskParams, get, protocol_versions=modern),
            MethodBinding("tasks/update", UpdateTaskParams, update, protocol_versions=modern),
            MethodBinding("tasks/cancel", TaskParams, cancel, protocol_versions=modern),
        ]

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if not wanted(ctx):
            return await call_next(ctx)
        background = calls.Background()
        reset = calls.background.set(background)
        try:
            result = await call_next(ctx)
        finally:
            calls.background.reset(reset)
        if background.task_id is None:
            return result  # not an asking tool, or an approval: answered as ever
        state, _ = await _read(background.task_id)
        return {"resultType": "task", **{key: value for key, value in state.items() if key != "result"}}
