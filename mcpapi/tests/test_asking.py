"""mcpapi.asking: an asking tool as an adapter of questions.asking (its cancel group, its result)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

from mcpapi import calls
from mcpapi.asking import ask_and_wait
from mcpapi.server import access_token
from questions.models import CancelReason, Kind, Question
from tokens.models import AgentToken

pytestmark = [pytest.mark.django_db(transaction=True)]


async def test_a_cancel_sent_the_moment_the_question_is_written_reaches_the_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The TypeScript SDK cancels on Esc, possibly before the call has started to wait: nothing is lost.
    agent, raw = await database_sync_to_async(AgentToken.issue)("agent-a")
    auth_context_var.set(AuthenticatedUser(access_token(agent, raw)))
    ask = Question.ask

    def ask_then_cancel(**fields: Any) -> tuple[Question, bool]:
        written = ask(**fields)
        message = {"type": "call.cancel", "reason": "User pressed Esc"}
        async_to_sync(get_channel_layer().group_send)(calls.call_group(agent.pk, "7"), message)
        return written

    async def list_tools() -> list[object]:
        return []

    monkeypatch.setattr(Question, "ask", staticmethod(ask_then_cancel))
    ctx = SimpleNamespace(
        request_id=7, request_context=SimpleNamespace(meta={}), mcp_server=SimpleNamespace(list_tools=list_tools)
    )
    result = await asyncio.wait_for(
        ask_and_wait(ctx, tool="ask_question", kind=Kind.QUESTION, text="Esc at once?", timeout=None),  # type: ignore[arg-type]
        10,
    )
    assert result.structured_content is not None
    assert result.structured_content["status"] == "cancelled"
    stored = await database_sync_to_async(Question.objects.get)(text="Esc at once?")
    assert stored.cancel_reason == CancelReason.CLIENT_CANCELLED
