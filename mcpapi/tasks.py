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
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    RequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from core.db import database_sync_to_async
from mcpapi import asking, calls
from mcpapi.models import AskTask
from notify import steps
from questions import wording
from questions.kinds.base import InvalidAnswer
from questions.models import AlreadyResolved, AnswerImage, Status

logger = logging.getLogger(__name__)

EXTENSION = "io.modelcontextprotocol/tasks"
# A person takes minutes; Claude Code polls every second whatever this says, other clients may listen.
POLL_INTERVAL_MS = 2000
# The one input request a task makes (its form): a key is never reused within a task, and there is one.
INPUT_KEY = "answer"
# With HOOKBRIDGE_TASKS=allowed, every asking tool but an approval lists this optional argument: the agent
# chooses, call by call, to go on working while a person answers. Off and auto list nothing new, so the
# seeds' schemas stay exact where the choice is not the agent's.
BACKGROUND = "background"
BACKGROUND_SCHEMA = {
    "type": "boolean",
    "default": False,
    "title": "Background",
    "description": (
        "Ask in the background: the call returns a task at once and you go on working; the answer comes as "
        "the task's result. Only for clients that support MCP tasks; others wait as usual."
    ),
}


class TaskParams(RequestParams):
    # Taken as sent and checked by the handlers (`_task_id`, `_responses`): the SDK's own validation would refuse a
    # wrong value with a bare "Invalid request parameters" and empty data, naming no field (issue 54).
    task_id: Any = None


class UpdateTaskParams(TaskParams):
    input_responses: Any = None


TASK_ID_LENGTH = 64


def _refused(field: str, message: str) -> MCPError:
    return MCPError(INVALID_PARAMS, f"{field}: {message}", {"field": field})


def _kind(value: Any) -> str:
    """What a JSON value is, as its sender would say it."""
    if value is None:
        return "null (or missing)"
    names = {bool: "true or false", int: "a number", float: "a number", list: "a list", dict: "an object"}
    return names.get(type(value), "text")


def _task_id(value: Any) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= TASK_ID_LENGTH:
        shown = f"{len(value)} characters" if isinstance(value, str) else _kind(value)
        said = f"the task's id as the call's result gave it: text of 1 to {TASK_ID_LENGTH} characters, not {shown}"
        raise _refused("taskId", said)
    return value


def _responses(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _refused("inputResponses", f"an object of the inputs the task asked for, by key, not {_kind(value)}")
    return value


def _meta(ctx: ServerRequestContext[Any, Any], key: str) -> dict[str, Any]:
    meta = (ctx.params or {}).get("_meta") or {}
    found = meta.get(key) if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this very request declares the extension: a client that did not is never sent a task."""
    extensions = _meta(ctx, CLIENT_CAPABILITIES_META_KEY).get("extensions")
    return isinstance(extensions, dict) and EXTENSION in extensions


def takes_forms(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client shows form elicitations (an empty `elicitation` capability means forms)."""
    elicitation = _meta(ctx, CLIENT_CAPABILITIES_META_KEY).get("elicitation")
    return isinstance(elicitation, dict) and (not elicitation or "form" in elicitation)


def client_name(ctx: ServerRequestContext[Any, Any]) -> str:
    info = _meta(ctx, CLIENT_INFO_META_KEY)
    return str(info.get("title") or info.get("name") or "the agent's client")


def offer_background_argument(schema: dict[str, Any]) -> None:
    """List `background` in an asking tool's input schema (HOOKBRIDGE_TASKS=allowed)."""
    schema.setdefault("properties", {})[BACKGROUND] = dict(BACKGROUND_SCHEMA)


def asked_for(params: CallToolRequestParams) -> bool:
    """Whether the call passed `background: true`; anything but a boolean is refused, naming the argument."""
    value = (params.arguments or {}).get(BACKGROUND, False)
    if not isinstance(value, bool):
        raise ValueError(f"arguments.{BACKGROUND}: must be true or false")
    return value


def wanted(ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams) -> bool:
    """Whether this tools/call may be answered with a task, should its tool ask a person something."""
    mode = settings.HOOKBRIDGE_TASKS
    # Checked first, for every client: a bad value is the caller's mistake whether or not a task could follow.
    chosen = mode == "allowed" and asked_for(params)
    if mode == "off" or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS or not declared(ctx):
        return False
    if mode == "auto" or chosen:
        return True
    access = get_access_token()  # "allowed": the token's owner turned "may ask in the background" on
    return access is not None and bool((access.claims or {}).get("background"))


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
    if question.status == Status.PENDING and task.input_wanted:
        # Offered in the agent's client too: one form, its key the same for the task's life.
        state["status"] = "input_required"
        state["statusMessage"] = f"{waiting_words(task)} You may answer here too: the first answer wins."
        form = {"mode": "form", "message": question.text, "requestedSchema": question.kind_spec.elicitation(question)}
        state["inputRequests"] = {INPUT_KEY: {"method": "elicitation/create", "params": form}}
    elif question.status == Status.PENDING:
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


def readable(task_id: str, owner: int | None) -> tuple[dict[str, Any], AskTask]:
    """The task's state for its owner; past its time to live it is refused, as its handle's ttlMs said."""
    task = AskTask.owned(task_id, owner)
    if task is None:
        raise _unknown(task_id)
    # The agent still asks after it: noted, so a pending question's task lives on and its card says nobody left.
    task.question.agent_polled()
    kept_until = task.kept_until()
    if kept_until <= timezone.now():
        # Only the owner reaches this (owned() filtered by token), so saying that it existed tells nobody else.
        raise MCPError(
            INVALID_PARAMS, f"taskId: task {task_id!r} has expired: it was kept until {_iso(kept_until)} (its ttlMs)"
        )
    return _state(task), task


async def _read(task_id: Any) -> tuple[dict[str, Any], AskTask]:
    owner = _owner()
    found: tuple[dict[str, Any], AskTask] = await database_sync_to_async(readable)(_task_id(task_id), owner)
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
        how = wording.answered_how(question, when)
        # In words, after the seeds' own content; and beside their structured answer, because Claude Code hands
        # its model a task's structured content alone (its <task-notification>, 2.1.331).
        result.content.append(TextContent(type="text", text=how))
        if isinstance(result.structured_content, dict):
            result.structured_content = {**result.structured_content, "answered": how}
        await database_sync_to_async(question.mark_delivered)()
    state["result"] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return state


async def cancel(ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
    """Withdraw the question everywhere; a task already ended stays as it ended (the spec's cooperative cancel)."""
    _, task = await _read(params.task_id)
    await database_sync_to_async(task.cancel)()
    return {}


async def update(ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams) -> HandlerResult:
    """An answer given in the agent's client: recorded as any answer is, unless someone answered first."""
    responses = _responses(params.input_responses)
    _, task = await _read(params.task_id)
    for key in responses:
        if key != INPUT_KEY or not task.offered_to_client:
            raise _refused(f"inputResponses.{key}", "this task asks for no such input")
    response = responses.get(INPUT_KEY)
    if response is None:
        return {}
    await database_sync_to_async(answered_in_client)(task, response)
    return {}


def answered_in_client(task: AskTask, response: Any) -> None:
    """The person at the agent's client accepted the form (an answer), or declined it (the team answers)."""
    field = f"inputResponses.{INPUT_KEY}"
    action = response.get("action") if isinstance(response, dict) else None
    if action not in ("accept", "decline", "cancel"):
        raise MCPError(INVALID_PARAMS, f"{field}.action: must be 'accept', 'decline' or 'cancel'")
    question = task.question
    if question.status != Status.PENDING:
        return  # answered first elsewhere: acknowledged, and tasks/get gives that answer
    if action != "accept":
        task.decline_in_client()
        return
    content = response.get("content", {})
    if not isinstance(content, dict):
        raise MCPError(INVALID_PARAMS, f"{field}.content: the form's values, as an object")
    if not any(value not in (None, "", []) for value in content.values()):
        # Accepted with nothing filled in: no answer, so the team's, as a decline. (Refused, Claude Code 2.1.331
        # marks the task failed and cancels it, which would withdraw the question from the team too.)
        task.decline_in_client()
        return
    try:
        reply = question.kind_spec.from_elicitation(question, content)
        by = f"{task.token.name if task.token else question.asker_name} (in {task.client or 'its client'})"
        question.record_answer(reply=reply, by_token=task.token, by_name=by, source="client")
    except InvalidAnswer as exc:
        raise MCPError(INVALID_PARAMS, f"{field}.content.{exc.field}: {exc}") from None
    except AlreadyResolved:
        return  # a person on the team was quicker by a moment: theirs stands


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
        try:
            background_wanted = wanted(ctx, params)
        except ValueError as exc:
            return CallToolResult(
                content=[TextContent(type="text", text=f"Invalid arguments for {params.name}: {exc}")], is_error=True
            )
        if not background_wanted:
            return await call_next(ctx)
        offer = settings.HOOKBRIDGE_ANSWER_IN_CLIENT and takes_forms(ctx)
        background = calls.Background(offer_to_client=offer, client=client_name(ctx))
        reset = calls.background.set(background)
        try:
            result = await call_next(ctx)
        finally:
            calls.background.reset(reset)
        if background.task_id is None:
            return result  # not an asking tool, or an approval: answered as ever
        state, _ = await _read(background.task_id)
        return {"resultType": "task", **{key: value for key, value in state.items() if key != "result"}}
