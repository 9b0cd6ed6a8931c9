"""An answer with a screenshot reaches the agent as MCP image content beside its text (issue 29 point 7).

Against a real daphne process, with the clients agents run: the Python SDK in both protocol eras, the
TypeScript SDK, and a stdio process next to the running server; the image is given through the JSON API.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.types import ImageContent, TextContent

from testing.images import GIF, PNG
from testing.live import LiveServer, stdio
from testing.ts_client import ts_clients

ERAS = ["legacy", "2026-07-28"]


async def answer_with_images(server: LiveServer, question_id: str, text: str, *images: bytes) -> httpx2.Response:
    given = [
        {
            "mimeType": "image/png" if data.startswith(b"\x89PNG") else "image/gif",
            "data": base64.b64encode(data).decode(),
        }
        for data in images
    ]
    async with httpx2.AsyncClient(headers=server.auth("answer-bot"), timeout=60) as http:
        body = {"questionId": question_id, "answer": text, "images": given}
        return await http.post(f"{server.url}/api/mcp-answer", json=body)


def assert_text_then_images(content: list[Any], text: str) -> None:
    assert isinstance(content[0], TextContent)
    assert content[0].text == f'{{"answer": "{text}"}}'
    assert [(type(c), c.mime_type, base64.b64decode(c.data)) for c in content[1:]] == [
        (ImageContent, "image/png", PNG),
        (ImageContent, "image/gif", GIF),
    ]


@pytest.mark.parametrize("mode", ERAS)
async def test_the_python_sdk_gets_the_images_beside_the_text(live_server_proc: LiveServer, mode: str) -> None:
    text = f"What does the broken page look like ({mode})?"
    async with live_server_proc.mcp(mode) as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await live_server_proc.wait_for_question(text)
        response = await answer_with_images(live_server_proc, question["id"], "like this", PNG, GIF)
        assert response.status_code == 200, response.text
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {"answer": "like this"}, "the structured answer is as before"
    assert_text_then_images(result.content, "like this")


async def test_a_re_ask_after_the_answer_gets_the_images_too(live_server_proc: LiveServer) -> None:
    text = "Screenshot of the login page, please (asked again)?"
    async with live_server_proc.mcp("2026-07-28") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await live_server_proc.wait_for_question(text)
        call.cancel()
        await live_server_proc.wait_for_question(text)
        assert (await answer_with_images(live_server_proc, question["id"], "here", PNG, GIF)).status_code == 200
        again = await asyncio.wait_for(client.call_tool("ask_question", {"question": text}), 30)
    assert_text_then_images(again.content, "here")


async def test_the_typescript_sdk_gets_the_images_beside_the_text(live_server_proc: LiveServer) -> None:
    text = "Which icon is wrong (TypeScript)?"
    async with ts_clients() as ts:
        await ts.connect("host", f"{live_server_proc.url}/mcp", live_server_proc.tokens["agent-a"])
        await ts.call("host", "shot", "ask_question", {"question": text})
        question = await live_server_proc.wait_for_question(text)
        assert (await answer_with_images(live_server_proc, question["id"], "this one", PNG, GIF)).status_code == 200
        result = await ts.outcome("shot")
    assert result["event"] == "result", result
    content = result["result"]["content"]
    assert content[0] == {"type": "text", "text": '{"answer": "this one"}'}
    assert [(c["type"], c["mimeType"], base64.b64decode(c["data"])) for c in content[1:]] == [
        ("image", "image/png", PNG),
        ("image", "image/gif", GIF),
    ]


async def test_a_stdio_agent_gets_the_images_given_on_the_running_server(live_server_proc: LiveServer) -> None:
    text = "Over stdio: which chart is off?"
    params = stdio(live_server_proc, "--token", live_server_proc.tokens["agent-a"])
    async with Client(params) as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await live_server_proc.wait_for_question(text)
        assert (await answer_with_images(live_server_proc, question["id"], "the red one", PNG, GIF)).status_code == 200
        result = await asyncio.wait_for(call, 30)
    assert_text_then_images(result.content, "the red one")
