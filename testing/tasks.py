"""The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) as a client speaks it, on the mcp SDK's own
client extension API (`mcp.client.extension`): it declares the extension on every request, claims the `task`
result of a tools/call, and finishes it by polling `tasks/get` as Claude Code does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import anyio
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from mcp.types import CallToolResult, TextContent
from mcp_types import (
    CancelTaskRequest,
    CancelTaskRequestParams,
    GetTaskRequest,
    GetTaskRequestParams,
    Request,
    RequestParams,
    Result,
)
from pydantic import ConfigDict
from pydantic.alias_generators import to_camel

EXTENSION = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")


class TaskHandle(Result):
    """A CreateTaskResult: what a tools/call answers with when the server makes it a task."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class Reply(Result):
    """Any result, its keys kept as the wire has them (camelCase)."""

    model_config = ConfigDict(extra="allow", alias_generator=to_camel, populate_by_name=True)


class UpdateTaskParams(RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class UpdateTaskRequest(Request[UpdateTaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskParams


class AnyParams(RequestParams):
    """Params as sent, whatever they hold: what a client with a bug (or a probe) puts on the wire."""

    model_config = ConfigDict(extra="allow")


class RawUpdateTaskRequest(Request[AnyParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: AnyParams


async def raw_update(session: ClientSession, **params: Any) -> dict[str, Any]:
    """tasks/update with `params` exactly as given (wire names: taskId, inputResponses)."""
    return await _send(session, RawUpdateTaskRequest(params=AnyParams(**params)))


async def _send(session: ClientSession, request: Request[Any, Any]) -> dict[str, Any]:
    reply = await session.send_request(request, Reply)
    return reply.model_dump(by_alias=True, mode="json", exclude_unset=True)


async def get(session: ClientSession, task_id: str) -> dict[str, Any]:
    """tasks/get, as the wire has it."""
    return await _send(session, GetTaskRequest(params=GetTaskRequestParams(task_id=task_id)))


async def cancel(session: ClientSession, task_id: str) -> dict[str, Any]:
    return await _send(session, CancelTaskRequest(params=CancelTaskRequestParams(task_id=task_id)))


async def update(session: ClientSession, task_id: str, responses: dict[str, Any]) -> dict[str, Any]:
    return await _send(session, UpdateTaskRequest(params=UpdateTaskParams(task_id=task_id, input_responses=responses)))


async def finished(session: ClientSession, task_id: str, *, every: float = 0.2, within: float = 30) -> dict[str, Any]:
    """Poll until the task ends; its last state."""
    with anyio.fail_after(within):
        while True:
            state = await get(session, task_id)
            if state["status"] in TERMINAL:
                return state
            await anyio.sleep(every)


class TasksClient(ClientExtension):
    identifier = EXTENSION

    def __init__(self) -> None:
        self.handles: list[TaskHandle] = []

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self.resolve)]

    async def resolve(self, handle: TaskHandle, ctx: ClaimContext) -> CallToolResult:
        self.handles.append(handle)
        state = await finished(ctx.session, handle.task_id)
        if state["status"] == "completed":
            return CallToolResult.model_validate(state["result"])
        return CallToolResult(content=[TextContent(type="text", text=state.get("statusMessage", ""))], is_error=True)


def seeds_part(structured: dict[str, Any]) -> dict[str, Any]:
    """A task result's structured content without the words Hook Bridge adds ("answered"): the seeds' own."""
    assert str(structured.get("answered", "")).startswith("Answered by "), structured
    return {key: value for key, value in structured.items() if key != "answered"}
