"""A caller that goes away, or cancels, and an answer that still is not lost."""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest

from tests.live import LiveServer, receive_until

pytestmark = [pytest.mark.e2e]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_client_that_closes_mid_wait_cancels_the_question_on_every_dashboard(
    live_server_proc: LiveServer, mode: str
) -> None:
    text = f"Closing mid-wait ({mode})?"
    async with live_server_proc.login() as browser, live_server_proc.dashboard_socket(browser) as dashboard:
        await receive_until(dashboard, 'id="question-list"')  # the current state comes first

        async with live_server_proc.mcp(mode) as client:
            call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
            question = await live_server_proc.wait_for_question(text)
            added = await receive_until(dashboard, f'id="question-{question["id"]}"')
            assert "beforeend:#question-list" in added
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
        # Leaving the client's context closes its HTTP connection.

        removed = await receive_until(dashboard, f'id="question-{question["id"]}" hx-swap-oob="delete"')
        assert "client disconnected" in removed
    cancelled = await live_server_proc.wait_for_question(text, status="cancelled")
    assert cancelled["cancelReason"] == "client_disconnected"


async def test_an_answer_given_after_the_agent_left_is_returned_when_it_asks_again(
    live_server_proc: LiveServer,
) -> None:
    text = "Re-ask me after I disconnect?"
    async with live_server_proc.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await live_server_proc.wait_for_question(text)
        call.cancel()
    await live_server_proc.wait_for_question(text, status="cancelled")

    late = await live_server_proc.answer_via_api(question["id"], "answered while you were away")
    assert late.status_code == 200

    async with live_server_proc.mcp("2026-07-28") as client:
        result = await asyncio.wait_for(client.call_tool("ask_question", {"question": text}), 10)
    assert result.structured_content == {"answer": "answered while you were away"}
    same_text = [q for q in await live_server_proc.questions() if q["question"] == text]
    assert [q["id"] for q in same_text] == [question["id"]], "re-asking must not create a duplicate"


async def test_a_re_ask_while_still_pending_attaches_to_the_same_question(
    live_server_proc: LiveServer,
) -> None:
    text = "Asked twice by a reconnecting agent?"
    async with live_server_proc.mcp("legacy") as client:
        first = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await live_server_proc.wait_for_question(text)
        async with live_server_proc.mcp("legacy") as again:
            second = asyncio.create_task(again.call_tool("ask_question", {"question": text}))
            await asyncio.sleep(0.5)
            assert (await live_server_proc.answer_via_api(question["id"], "one answer")).status_code == 200
            assert (await asyncio.wait_for(second, 10)).structured_content == {"answer": "one answer"}
        assert (await asyncio.wait_for(first, 10)).structured_content == {"answer": "one answer"}
    assert len([q for q in await live_server_proc.questions() if q["question"] == text]) == 1


async def test_a_cancel_notification_reaches_the_call_while_its_stream_stays_open(
    live_server_proc: LiveServer,
) -> None:
    """What the TypeScript SDK does on Esc: POST notifications/cancelled, keep the stream open."""
    text = "Cancel me with a notification?"
    headers = {
        **live_server_proc.auth(),
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }
    call_body = {
        "jsonrpc": "2.0",
        "id": 4242,
        "method": "tools/call",
        "params": {"name": "ask_question", "arguments": {"question": text}},
    }
    url = f"{live_server_proc.url}/mcp"
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:

        async def call() -> list[str]:
            async with http.stream("POST", url, json=call_body) as response:
                assert response.status_code == 200
                return [line async for line in response.aiter_lines() if line.startswith("data:")]

        stream = asyncio.create_task(call())
        await live_server_proc.wait_for_question(text)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4242}}
        assert (await http.post(url, json=cancel)).status_code == 202

        cancelled = await live_server_proc.wait_for_question(text, status="cancelled")
        assert cancelled["cancelReason"] == "client_cancelled"
        events = await asyncio.wait_for(stream, 10)
    payload = json.loads(events[-1].removeprefix("data:"))
    assert json.loads(payload["result"]["content"][0]["text"])["status"] == "cancelled"


async def test_a_cancel_from_another_token_does_not_touch_the_call(live_server_proc: LiveServer) -> None:
    text = "Only my own token may cancel me?"
    async with live_server_proc.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await live_server_proc.wait_for_question(text)
        headers = {**live_server_proc.auth("agent-b"), "Accept": "application/json, text/event-stream"}
        async with httpx2.AsyncClient(headers=headers) as http:
            for request_id in range(0, 5):
                cancel = {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": request_id},
                }
                await http.post(f"{live_server_proc.url}/mcp", json=cancel)
        await asyncio.sleep(1.2)
        assert not call.done()
        assert (await live_server_proc.answer_via_api(question["id"], "still here")).status_code == 200
        assert (await asyncio.wait_for(call, 10)).structured_content == {"answer": "still here"}
