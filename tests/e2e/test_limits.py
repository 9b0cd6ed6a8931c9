"""One agent can't stall another: waiting calls and sockets are capped per token (and per person).

Against a real daphne process with small caps, so the limit is reached in a few calls.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack

import httpx2
import pytest
import websockets
from websockets.typing import Origin

from testing.live import LiveServer, serving, text_of


@pytest.fixture(scope="module")
def capped_server() -> Iterator[LiveServer]:
    yield from serving(
        HOOKBRIDGE_MAX_WAITING_PER_TOKEN="2", HOOKBRIDGE_MAX_SOCKETS_PER_TOKEN="2", HOOKBRIDGE_MAX_HOLD="60"
    )


async def ask(server: LiveServer, text: str, token_name: str = "agent-a") -> str:
    async with server.mcp(token_name=token_name) as client:
        return text_of(await client.call_tool("ask_question", {"question": text}))


async def test_a_token_past_its_waiting_calls_gets_an_error_naming_the_setting_and_nothing_is_written(
    capped_server: LiveServer,
) -> None:
    server = capped_server
    held = [asyncio.create_task(ask(server, f"Held {n}?")) for n in range(2)]
    first = await server.wait_for_question("Held 0?")
    await server.wait_for_question("Held 1?")
    async with server.mcp() as client:
        refused = await client.call_tool("ask_question", {"question": "One too many?"})
    assert refused.is_error
    assert "HOOKBRIDGE_MAX_WAITING_PER_TOKEN=2" in text_of(refused)
    assert not [q for q in await server.questions() if q["question"] == "One too many?"]
    # Another agent is not held up by agent-a's calls.
    other = asyncio.create_task(ask(server, "Agent b's own?", token_name="agent-b"))
    other_question = await server.wait_for_question("Agent b's own?")
    assert (await server.answer_via_api(other_question["id"], "fine")).status_code == 200
    assert "fine" in await asyncio.wait_for(other, 30)
    # An answer frees a slot: agent-a may ask again.
    assert (await server.answer_via_api(first["id"], "done")).status_code == 200
    assert "done" in await asyncio.wait_for(held[0], 30)
    again = asyncio.create_task(ask(server, "Now there is room?"))
    room = await server.wait_for_question("Now there is room?")
    for question in (room, await server.wait_for_question("Held 1?")):
        assert (await server.answer_via_api(question["id"], "ok")).status_code == 200
    await asyncio.wait_for(asyncio.gather(again, held[1]), 30)


@pytest.fixture
async def token_socket(capped_server: LiveServer) -> AsyncIterator[object]:
    async with AsyncExitStack() as stack:

        async def open_one(token_name: str) -> websockets.ClientConnection:
            return await stack.enter_async_context(
                websockets.connect(
                    f"ws://127.0.0.1:{capped_server.port}/ws/events/",
                    additional_headers=capped_server.auth(token_name),
                    origin=Origin(capped_server.url),
                )
            )

        yield open_one


async def test_a_socket_past_the_tokens_cap_is_closed_with_4429_naming_the_setting(
    capped_server: LiveServer, token_socket: object
) -> None:
    open_one = token_socket
    first = await open_one("answer-bot")  # type: ignore[operator]
    await open_one("answer-bot")  # type: ignore[operator]
    third = await open_one("answer-bot")  # type: ignore[operator]
    error = json.loads(await asyncio.wait_for(third.recv(), 30))
    assert error["type"] == "error"
    assert "HOOKBRIDGE_MAX_SOCKETS_PER_TOKEN=2" in error["error"]
    with pytest.raises(websockets.ConnectionClosed):
        await asyncio.wait_for(third.recv(), 30)
    assert third.close_code == 4429
    # The first two still get their state; a person's dashboard is counted apart from the token.
    assert '"questions-queued"' in await asyncio.wait_for(first.recv(), 30)
    async with capped_server.login() as http, capped_server.dashboard_socket(http) as page:
        assert 'id="question-list"' in await asyncio.wait_for(page.recv(), 30)
    # Closing one frees its place.
    await first.close()
    await asyncio.sleep(0.3)
    fourth = await open_one("answer-bot")  # type: ignore[operator]
    assert '"questions-queued"' in await asyncio.wait_for(fourth.recv(), 30)


@pytest.fixture(scope="module")
def rationed_server() -> Iterator[LiveServer]:
    """Each token may make 60 requests a minute, in bursts of 10."""
    yield from serving(HOOKBRIDGE_REQUESTS_PER_MINUTE="60", HOOKBRIDGE_MAX_HOLD="60")


MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


async def test_a_token_flooding_mcp_gets_429_naming_the_setting_and_another_token_is_served(
    rationed_server: LiveServer,
) -> None:
    """Issue 37: every request counts, re-asks too; the refusal costs the server no query."""
    server = rationed_server
    ask = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "ask_question", "arguments": {"question": "Flood: again?"}}}  # fmt: skip
    async with httpx2.AsyncClient(timeout=30) as http:

        async def reask() -> httpx2.Response:
            # A host that times out and asks the same again at once, cut short here after its headers.
            async with http.stream(
                "POST", f"{server.url}/mcp", json=ask, headers={**MCP_HEADERS, **server.auth("agent-a")}
            ) as response:
                if response.status_code != 200:
                    await response.aread()
                return response

        answers = [await reask() for _ in range(14)]
        statuses = [response.status_code for response in answers]
        assert statuses[:10] == [200] * 10, statuses
        refused = next(response for response in answers if response.status_code == 429)
        assert 1 <= int(refused.headers["Retry-After"]) <= 2
        assert "HOOKBRIDGE_REQUESTS_PER_MINUTE=60" in refused.json()["error"]["message"]
        # Another token is not held up by agent-a's flood.
        listed = await http.post(
            f"{server.url}/mcp",
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={**MCP_HEADERS, **server.auth("agent-b")},
        )
        assert listed.status_code == 200
    # Every re-ask found the one question: nothing was written twice.
    assert len([q for q in await server.questions() if q["question"] == "Flood: again?"]) == 1


@pytest.fixture(scope="module")
def ask_rationed_server() -> Iterator[LiveServer]:
    """Each token may ask 3 questions a minute (re-asks included), in bursts of 10."""
    yield from serving(HOOKBRIDGE_QUESTIONS_PER_MINUTE="3", HOOKBRIDGE_MAX_HOLD="60")


async def test_asks_past_the_allowance_get_429_at_the_edge_naming_the_setting_and_other_calls_go_on(
    ask_rationed_server: LiveServer,
) -> None:
    """Issue 37: a re-ask flood is turned away before the SDK, as an HTTP 429, not queued as tool calls."""
    server = ask_rationed_server

    def call(name: str, text: str) -> dict[str, object]:
        return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": name, "arguments": {"question": text}}}  # fmt: skip

    async with httpx2.AsyncClient(timeout=30) as http:

        async def post(message: dict[str, object], token: str = "agent-a") -> httpx2.Response:
            # A host that times out and asks the same again at once, cut short here after its headers.
            async with http.stream(
                "POST", f"{server.url}/mcp", json=message, headers={**MCP_HEADERS, **server.auth(token)}
            ) as response:
                if response.status_code != 200:
                    await response.aread()
                return response

        answers = [await post(call("ask_question", "Edge: again?")) for _ in range(12)]
        statuses = [response.status_code for response in answers]
        assert statuses[:10] == [200] * 10, statuses
        assert statuses[10:] == [429, 429], statuses
        refused = answers[10].json()
        assert refused["error"]["code"] == -32000
        assert "HOOKBRIDGE_QUESTIONS_PER_MINUTE=3" in refused["error"]["message"]
        assert "agent-a" in refused["error"]["message"]
        assert 1 <= int(answers[10].headers["Retry-After"]) <= 20
        # What is not a question still goes: the token's other calls, and another token's asks.
        listed = await http.post(
            f"{server.url}/mcp",
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={**MCP_HEADERS, **server.auth("agent-a")},
        )
        assert listed.status_code == 200, listed.text
        assert (await post(call("ask_question", "Edge: B asks?"), "agent-b")).status_code == 200
    asked = [q["question"] for q in await server.questions()]
    assert asked.count("Edge: again?") == 1
    assert "Edge: B asks?" in asked
