"""ask_question end to end: the mcp SDK's own Client over HTTP against a real daphne process."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from testing.live import LiveServer, text_of

ERAS = ["legacy", "2026-07-28"]


async def ask_in_background(server: LiveServer, mode: str, arguments: dict[str, Any], **kw: Any) -> asyncio.Task[Any]:
    async def call() -> Any:
        async with server.mcp(mode, **kw) as client:
            return await client.call_tool("ask_question", arguments)

    return asyncio.create_task(call())


@pytest.mark.parametrize("mode", ERAS)
async def test_it_negotiates_the_protocol_era(live_server_proc: LiveServer, mode: str) -> None:
    async with live_server_proc.mcp(mode) as client:
        expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
        assert client.session.protocol_version == expected
        tools = {tool.name for tool in (await client.list_tools()).tools}
    assert tools == {"ask_question", "wait_for_answer", "submit_lifecycle_event", "get_phase_status"}


@pytest.mark.parametrize("mode", ERAS)
async def test_it_returns_the_answer_given_through_the_api(live_server_proc: LiveServer, mode: str) -> None:
    text = f"Which database should the {mode} agent use?"
    call = await ask_in_background(live_server_proc, mode, {"question": text})
    question = await live_server_proc.wait_for_question(text)
    assert not call.done(), "ask_question must block until the question is answered"
    assert question["asker"] == "agent-a"

    response = await live_server_proc.answer_via_api(question["id"], "PostgreSQL, please")
    assert response.status_code == 200
    assert response.json()["answer"]["answeredBy"] == "answer-bot"

    result = await asyncio.wait_for(call, 30)
    assert not result.is_error
    assert result.structured_content == {"answer": "PostgreSQL, please"}
    assert json.loads(text_of(result)) == {"answer": "PostgreSQL, please"}


@pytest.mark.parametrize("mode", ERAS)
async def test_it_returns_the_option_chosen_on_the_dashboard(live_server_proc: LiveServer, mode: str) -> None:
    text = f"Ship the {mode} release?"
    options = [
        {"value": "ship", "label": "Ship it", "description": "Tag and publish now"},
        {"value": "hold", "label": "Hold"},
    ]
    call = await ask_in_background(
        live_server_proc, mode, {"question": text, "options": options, "allow_free_text": False}
    )
    question = await live_server_proc.wait_for_question(text)
    assert question["options"] == options

    async with live_server_proc.login() as browser:
        response = await browser.post(f"/questions/{question['id']}/answer", data={"option": "hold"})
    assert response.status_code == 200, response.text

    result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {"answer": "hold"}
    answered = await live_server_proc.wait_for_question(text, status="answered")
    assert answered["answer"]["answeredBy"] == live_server_proc.username


async def test_two_concurrent_agents_each_get_their_own_answer(live_server_proc: LiveServer) -> None:
    first = await ask_in_background(live_server_proc, "legacy", {"question": "Agent A: tabs or spaces?"})
    second = await ask_in_background(
        live_server_proc, "2026-07-28", {"question": "Agent B: which port?"}, token_name="agent-b"
    )
    question_a = await live_server_proc.wait_for_question("Agent A: tabs or spaces?")
    question_b = await live_server_proc.wait_for_question("Agent B: which port?")
    assert question_b["asker"] == "agent-b"

    # Answer in the opposite order of asking.
    assert (await live_server_proc.answer_via_api(question_b["id"], "8080")).status_code == 200
    result_b = await asyncio.wait_for(second, 30)
    assert not first.done()
    assert (await live_server_proc.answer_via_api(question_a["id"], "spaces")).status_code == 200
    result_a = await asyncio.wait_for(first, 30)

    assert result_a.structured_content == {"answer": "spaces"}
    assert result_b.structured_content == {"answer": "8080"}


async def test_the_first_answer_wins_and_a_second_gets_409(live_server_proc: LiveServer) -> None:
    text = "Who wins the race to answer?"
    call = await ask_in_background(live_server_proc, "legacy", {"question": text})
    question = await live_server_proc.wait_for_question(text)

    first = await live_server_proc.answer_via_api(question["id"], "first")
    second = await live_server_proc.answer_via_api(question["id"], "second", token_name="answer-bot-2")

    assert first.status_code == 200
    assert second.status_code == 409
    assert second.json()["answeredBy"] == "answer-bot"
    assert "already answered by answer-bot" in second.json()["error"]
    assert (await asyncio.wait_for(call, 30)).structured_content == {"answer": "first"}
    stored = await live_server_proc.wait_for_question(text, status="answered")
    assert stored["answer"]["text"] == "first"


async def test_the_api_refuses_unknown_and_malformed_answers(live_server_proc: LiveServer) -> None:
    missing = await live_server_proc.answer_via_api("5f0c1c5e-4a7e-4c43-9d4c-000000000000", "x")
    assert missing.status_code == 404
    malformed = await live_server_proc.answer_via_api("not-a-uuid", "x")
    assert malformed.status_code == 400
    assert malformed.json()["field"] == "questionId"
