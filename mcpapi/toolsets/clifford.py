"""The Clifford set: an agent that is blocked asks for help; a person answers or dismisses it."""

from __future__ import annotations

from typing import Annotated

from django.conf import settings
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field, StrictStr

from mcpapi.asking import ask_and_wait
from mcpapi.toolsets.entries import Toolset
from questions.models import Kind

Text = Annotated[StrictStr, Field(min_length=1, max_length=settings.HOOKBRIDGE_MAX_QUESTION_LENGTH)]


async def request_help(
    task: Annotated[Text, Field(description="What you are working on.")],
    reason: Annotated[Text, Field(description="Why you are blocked.")],
    question: Annotated[Text, Field(description="What you need from a person.")],
    ctx: Context,
) -> CallToolResult:
    """Ask a person on your team for help when you are blocked, and wait for their reply.

    The result's text is the person's reply; when they dismiss the request it
    says so ({"status": "dismissed", ...}): then proceed on your own judgement.
    """
    payload = {"task": task, "reason": reason}
    return await ask_and_wait(
        ctx,
        tool="request_help",
        kind=Kind.HELP,
        text=question,
        payload=payload,
        timeout=settings.HOOKBRIDGE_QUESTION_TIMEOUT,
    )


TOOLSET = Toolset(
    name="clifford",
    tools=(("request_help", request_help),),
    asking=frozenset({"request_help"}),
    asks=True,
    server_name="clifford",  # what the original called itself, for clients that key on it
    instructions=(
        "When you are blocked, request_help asks a person on your team and {waits} they answer or dismiss it; "
        "if they dismiss it, proceed on your own judgement."
    ),
)
