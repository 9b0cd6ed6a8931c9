"""The tools over stdio (manage.py mcp_stdio), against the web server's database."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.live import ROOT, LiveServer, receive_until

pytestmark = [pytest.mark.e2e]


def stdio(server: LiveServer, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp_stdio", *args], env=server.env, cwd=str(ROOT)
    )


async def test_a_question_asked_over_stdio_is_answered_through_the_web_app(live_server_proc: LiveServer) -> None:
    text = "Asked over stdio?"
    params = stdio(live_server_proc, "--token", live_server_proc.tokens["agent-a"], "--toolsets", "maxsim+askme")
    async with Client(params) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"ask_question", "ask-one-question"} <= tools
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await live_server_proc.wait_for_question(text)
        assert question["asker"] == "agent-a"
        assert (await live_server_proc.answer_via_api(question["id"], "answered on the web")).status_code == 200
        # Two processes, two in-memory layers: the wait's row re-read delivers it.
        result = await asyncio.wait_for(call, 15)
    assert result.structured_content == {"answer": "answered on the web"}


async def test_without_a_token_the_os_user_asks(live_server_proc: LiveServer) -> None:
    text = "Who asks without a token?"
    async with Client(stdio(live_server_proc)) as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await live_server_proc.wait_for_question(text)
        await live_server_proc.answer_via_api(question["id"], "you do")
        assert (await asyncio.wait_for(call, 15)).structured_content == {"answer": "you do"}
    assert question["asker"].endswith("(stdio)")


def test_nothing_but_protocol_messages_reaches_stdout(live_server_proc: LiveServer, tmp_path: Path) -> None:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_phase_status", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "submit_lifecycle_event", "arguments": {"event_type": "bogus"}}},
    ]  # fmt: skip
    env = {**live_server_proc.env, "LOG_LEVEL": "DEBUG", "MCP_LOG_LEVEL": "DEBUG"}
    errors = tmp_path / "stderr.log"  # a file, not a pipe: a full pipe would stall the server
    process = subprocess.Popen(
        [sys.executable, "manage.py", "mcp_stdio", "--token", live_server_proc.tokens["agent-a"]],
        cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors.open("w"), text=True,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
    process.stdin.flush()
    parsed: list[dict[str, Any]] = []
    # Read every reply before closing stdin: EOF ends the server, and with it any call still running.
    while {1, 2, 3, 4} - {message.get("id") for message in parsed}:
        line = process.stdout.readline()
        assert line, "the server closed stdout before answering every request"
        if line.strip():
            parsed.append(json.loads(line))  # fails on any stray non-JSON line
    process.stdin.close()
    parsed += [json.loads(line) for line in process.stdout.read().splitlines() if line.strip()]
    process.wait(30)
    assert all(message.get("jsonrpc") == "2.0" for message in parsed)
    assert "DEBUG" in errors.read_text(), "the debug logging went somewhere other than stderr"


def test_a_wrong_token_or_tool_set_is_refused(live_server_proc: LiveServer) -> None:
    for args, needle in (
        (["--token", "nope"], "not an active agent token"),
        (["--toolsets", "bogus"], "unknown tool set"),
    ):
        result = subprocess.run(
            [sys.executable, "manage.py", "mcp_stdio", *args], cwd=ROOT, env=live_server_proc.env,
            capture_output=True, text=True, timeout=60, input="",
        )  # fmt: skip
        assert result.returncode != 0 and needle in result.stderr


async def test_a_stdio_question_shows_live_on_the_web_dashboard(live_server_proc: LiveServer) -> None:
    """Two processes on the in-memory layer: the web server's watcher picks the question up."""
    text = "Do you see my stdio question live?"
    async with live_server_proc.login() as browser, live_server_proc.dashboard_socket(browser) as dashboard:
        await receive_until(dashboard, 'id="question-list"')
        async with Client(stdio(live_server_proc, "--token", live_server_proc.tokens["agent-a"])) as client:
            call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
            await receive_until(dashboard, text, timeout=10)
            question = await live_server_proc.wait_for_question(text)
            await live_server_proc.answer_via_api(question["id"], "seen it")
            assert (await asyncio.wait_for(call, 15)).structured_content == {"answer": "seen it"}
