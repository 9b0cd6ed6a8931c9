"""The progress set: an agent run reports acknowledgement, progress, status, response, completion and errors."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from django.conf import settings
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field, StrictBool, StrictInt, StrictStr

from core.db import database_sync_to_async
from lifecycle.models import AgentSession, SessionClosed, SessionEventType
from mcpapi.asking import caller, json_result
from mcpapi.toolsets.entries import Toolset

Guid = Annotated[StrictStr, Field(description="The session's guid, from POST /api/sessions.")]
Text = Annotated[StrictStr, Field(min_length=1, max_length=settings.HOOKBRIDGE_MAX_QUESTION_LENGTH)]


async def _record(guid: str, event_type: SessionEventType, **data: Any) -> CallToolResult:
    try:
        pk = uuid.UUID(guid)
    except ValueError:
        raise ToolError(f"guid: {guid!r} is not a session guid") from None
    token, _ = caller()

    @database_sync_to_async
    def record() -> dict[str, Any]:
        # Another token's session is answered exactly like an unknown one.
        session = AgentSession.objects.filter(pk=pk, token_id=token.pk if token else None).first()
        if session is None:
            raise ToolError(f"guid: no session {guid} for this token")
        try:
            event = session.record(event_type, **data)
        except SessionClosed:
            raise ToolError(f"guid: session {guid} is closed") from None
        return event.message()

    return json_result({"status": "ok", "event": await record()})


async def notify_ack(guid: Guid) -> CallToolResult:
    """Acknowledge that you received the task and are starting on it."""
    return await _record(guid, SessionEventType.ACK)


async def send_progress(
    guid: Guid, percent: Annotated[StrictInt, Field(ge=0, le=100, description="How far along, 0 to 100.")]
) -> CallToolResult:
    """Report how far along you are, in percent."""
    return await _record(guid, SessionEventType.PROGRESS, percent=percent)


async def send_status(
    guid: Guid,
    message: Annotated[Text, Field(description="What you are doing now.")],
    phase: Annotated[
        Literal["analyzing", "planning", "implementing", "deploying", "verifying"] | None,
        Field(description="Which phase of the work you are in, if you know."),
    ] = None,
) -> CallToolResult:
    """Report what you are doing now (and, optionally, in which phase)."""
    fields = {"message": message} | ({"phase": phase} if phase else {})
    return await _record(guid, SessionEventType.STATUS, **fields)


async def send_response(
    guid: Guid, content: Annotated[Text, Field(description="Your response, in markdown.")]
) -> CallToolResult:
    """Send your response; it is kept for whoever reads the session's result."""
    return await _record(guid, SessionEventType.RESPONSE, content=content)


async def notify_complete(guid: Guid, success: StrictBool = True) -> CallToolResult:
    """Report that the run is finished, successfully or not."""
    return await _record(guid, SessionEventType.COMPLETE, success=success)


async def notify_error(guid: Guid, error: Text, recoverable: StrictBool = False) -> CallToolResult:
    """Report an error, and whether you can recover from it."""
    return await _record(guid, SessionEventType.ERROR, error=error, recoverable=recoverable)


TOOLSET = Toolset(
    name="progress",
    tools=(
        notify_ack,
        send_progress,
        send_status,
        send_response,
        notify_complete,
        notify_error,
    ),
    asks=False,
    instructions=(
        "Report on the session you were given (its guid): notify_ack when you start, send_progress and send_status "
        "as you go, send_response with your result, then notify_complete or notify_error."
    ),
)
