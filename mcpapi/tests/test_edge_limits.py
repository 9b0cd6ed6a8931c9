"""Issue 37: asks past a token's allowance are refused at the /mcp edge with a 429 naming the setting."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import HttpCommunicator

from core.limits import OverLimit
from hookbridge_site.asgi import application
from questions import asking
from questions.models import Question
from tokens.models import AgentToken

pytestmark = [pytest.mark.django_db(transaction=True)]

ASK = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
       "params": {"name": "ask_question", "arguments": {"question": "Queued behind my own?"}}}  # fmt: skip


async def post_mcp(raw: str, message: dict[str, Any]) -> dict[str, Any]:
    headers = [
        (b"authorization", f"Bearer {raw}".encode()), (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", b"2025-11-25"),
    ]  # fmt: skip
    communicator = HttpCommunicator(application, "POST", "/mcp", body=json.dumps(message).encode(), headers=headers)
    response: dict[str, Any] = await communicator.get_response(timeout=20)
    return response


async def test_an_ask_past_the_tokens_queued_asks_is_refused_at_the_edge_and_nothing_is_written(
    settings: Any,
) -> None:
    settings.HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN = 1
    token, raw = await sync_to_async(AgentToken.issue)("agent-a")
    with asking.queued_slot(token.pk):  # one ask of this token is waiting to be written
        response = await post_mcp(raw, ASK)
    assert response["status"] == 429
    assert dict(response["headers"])[b"retry-after"] == b"1"
    error = json.loads(response["body"])["error"]
    assert "HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN=1" in error["message"]
    assert "agent-a" in error["message"]
    assert not await sync_to_async(Question.objects.exists)()


async def test_an_ask_past_the_workers_queue_of_every_tokens_asks_is_a_503_naming_the_setting(settings: Any) -> None:
    """Issue 54: many tokens' asks together are bounded too: refused at once, never queued in silence."""
    settings.HOOKBRIDGE_QUEUED_ASKS = 2
    token, raw = await sync_to_async(AgentToken.issue)("agent-a")
    others = [await sync_to_async(AgentToken.issue)(f"agent-{n}") for n in ("b", "c")]
    with asking.queued_slot(others[0][0].pk), asking.queued_slot(others[1][0].pk):  # two other tokens' asks
        response = await post_mcp(raw, ASK)
        with pytest.raises(OverLimit) as refused:  # the same bound on every way of asking (stdio, hooks)
            asking.queued_slot(token.pk)
    assert response["status"] == 503
    assert dict(response["headers"])[b"retry-after"] == b"2"
    error = json.loads(response["body"])["error"]
    assert "HOOKBRIDGE_QUEUED_ASKS=2" in error["message"]
    assert "HOOKBRIDGE_QUEUED_ASKS=2" in str(refused.value)
    assert not await sync_to_async(Question.objects.exists)()
    assert not asking.worker_queue_full(), "once they are written, asks go through again"


async def test_a_call_that_asks_nothing_is_not_refused_for_the_tokens_asks(settings: Any) -> None:
    settings.HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN = 1
    token, raw = await sync_to_async(AgentToken.issue)("agent-a")
    status = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "get_phase_status", "arguments": {}},
    }
    with asking.queued_slot(token.pk):
        response = await post_mcp(raw, status)
    assert response["status"] == 200, response["body"][:300]
