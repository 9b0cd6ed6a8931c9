"""Long waits: progress notifications keep a call alive; without them the call hands back a pending result."""

from __future__ import annotations

import asyncio

import pytest

from testing.live import LiveServer, text_of


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_it_sends_progress_notifications_while_waiting(live_server_proc: LiveServer, mode: str) -> None:
    text = f"Keep me alive ({mode})?"
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with live_server_proc.mcp(mode) as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}, progress_callback=on_progress))
        question = await live_server_proc.wait_for_question(text)
        where = f"http://127.0.0.1:8000/questions/{question['id']}/"
        await asyncio.sleep(1.5)  # the interval is 0.3 s on this server
        await live_server_proc.answer_via_api(question["id"], "alive")
        result = await asyncio.wait_for(call, 30)

    assert result.structured_content == {"answer": "alive"}
    assert len(seen) >= 3, seen
    values = [value for value, _ in seen]
    assert values == sorted(values), "progress must increase"
    assert len(set(values)) == len(values), "progress must increase"
    assert seen[0] == (0.0, f"Waiting for a person: the question is on the dashboard at {where}")
    assert all(message and message.startswith("Waiting for a person") and where in message for _, message in seen)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_without_a_progress_token_it_returns_still_pending_and_wait_for_answer_resumes(
    short_hold_server: LiveServer, mode: str
) -> None:
    text = f"Hold me briefly ({mode})?"
    async with short_hold_server.mcp(mode) as client:
        held = await asyncio.wait_for(client.call_tool("ask_question", {"question": text}), 30)
        pending = held.structured_content
        assert pending is not None
        assert pending["status"] == "pending"
        assert not held.is_error
        assert "wait_for_answer" in pending["message"]
        assert pending["questionId"] in pending["message"]

        question = await short_hold_server.wait_for_question(text)
        assert question["id"] == pending["questionId"]

        waiting = asyncio.create_task(client.call_tool("wait_for_answer", {"question_id": pending["questionId"]}))
        await asyncio.sleep(0.3)
        await short_hold_server.answer_via_api(question["id"], "worth the wait")
        result = await asyncio.wait_for(waiting, 30)
    assert result.structured_content == {"answer": "worth the wait"}


async def test_wait_for_answer_refuses_another_tokens_question(short_hold_server: LiveServer) -> None:
    text = "Whose question is this?"
    async with short_hold_server.mcp("legacy") as client:
        held = await client.call_tool("ask_question", {"question": text})
    assert held.structured_content is not None
    async with short_hold_server.mcp("legacy", token_name="agent-b") as other:
        result = await other.call_tool("wait_for_answer", {"question_id": held.structured_content["questionId"]})
    assert result.is_error
    assert "question_id" in text_of(result)
