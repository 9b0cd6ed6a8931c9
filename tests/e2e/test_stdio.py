"""The tools over stdio (manage.py mcp_stdio), against the web server's database."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from testing.live import ROOT, LiveServer, receive_until, stdio


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
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {"answer": "answered on the web"}


@pytest.fixture(scope="module")
def serve_and_stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server whose waiting calls re-read their rows only every 60 s: an answer that arrives sooner was a wake-up."""
    server = LiveServer(env_overrides={"HOOKBRIDGE_WAIT_SLICE": "60", "HOOKBRIDGE_MAX_HOLD": "120"})
    server.setup()
    yield server
    server.close()


async def test_an_answer_on_the_dashboard_wakes_the_stdio_call_at_once(
    serve_and_stdio: LiveServer, tmp_path: Path
) -> None:
    """The stdio process and the server share the embedded layer (core/local_layer.py)."""
    server = serve_and_stdio
    errors = tmp_path / "stdio.log"
    params = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_stdio", "--token", server.tokens["agent-a"]],
        env=server.env,
        cwd=str(ROOT),
    )
    async with server.login() as browser, server.dashboard_socket(browser) as dashboard:
        await receive_until(dashboard, 'id="question-list"')
        with errors.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                for n in range(3):
                    text = f"Wake me over stdio, {n}?"
                    call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
                    card = await receive_until(dashboard, text, timeout=30)
                    question_id = re.search(r'data-question-id="([0-9a-f-]{36})"', card)
                    assert question_id, card[:300]
                    await asyncio.sleep(0.2)  # the call is waiting now
                    response = await server.answer_on_dashboard(question_id.group(1), {"answer": f"woken {n}"})
                    assert response.status_code == 200
                    # Inside the 60 s slice, and the log below says no call was resolved without a wake-up.
                    result = await asyncio.wait_for(call, 50)
                    assert result.structured_content == {"answer": f"woken {n}"}
    log = errors.read_text()
    assert "resolved without a wake-up" not in log, log


async def test_without_a_token_the_os_user_asks(live_server_proc: LiveServer) -> None:
    text = "Who asks without a token?"
    async with Client(stdio(live_server_proc)) as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await live_server_proc.wait_for_question(text)
        await live_server_proc.answer_via_api(question["id"], "you do")
        assert (await asyncio.wait_for(call, 30)).structured_content == {"answer": "you do"}
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
    assert process.stdin is not None
    assert process.stdout is not None
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
        assert result.returncode != 0
        assert needle in result.stderr


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
            assert (await asyncio.wait_for(call, 30)).structured_content == {"answer": "seen it"}


async def test_stdio_works_with_no_server_and_an_answer_from_the_terminal_wakes_it(tmp_path: Path) -> None:
    """A laptop with no `serve` running: the stdio call still waits, and `questions answer` wakes it at once."""
    alone = LiveServer(env_overrides={"HOOKBRIDGE_WAIT_SLICE": "60"})  # its database and env; never started
    try:
        alone.migrate()
        token = alone.manage("create_token", "agent-a").strip().splitlines()[-1]
        params = StdioServerParameters(
            command=sys.executable, args=["manage.py", "mcp_stdio", "--token", token], env=alone.env, cwd=str(ROOT)
        )
        with (tmp_path / "stdio.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                call = asyncio.create_task(client.call_tool("ask_question", {"question": "Nobody serving?"}))
                listed = ""
                for _ in range(100):
                    listed = await asyncio.to_thread(alone.manage, "questions", "list")
                    if "Nobody serving?" in listed:
                        break
                    await asyncio.sleep(0.1)
                question_id = re.search(r"[0-9a-f-]{36}", listed)
                assert question_id, listed
                await asyncio.sleep(0.3)  # the call is waiting now
                await asyncio.to_thread(alone.manage, "questions", "answer", question_id.group(0), "from the shell")
                # From the answer's commit (the command has returned), not from the command's start: a loaded
                # machine takes seconds to start Django, which is no part of the wake-up.
                result = await asyncio.wait_for(call, 50)  # inside the 60 s slice
        assert result.structured_content == {"answer": "from the shell"}
        # Woken, not found by re-reading when the slice ran out: the call says which in its log.
        assert "resolved without a wake-up" not in (tmp_path / "stdio.log").read_text()
    finally:
        shutil.rmtree(alone.tmp, ignore_errors=True)


def test_a_line_the_sdk_cannot_parse_gets_an_answer_and_the_server_goes_on(live_server_proc: LiveServer) -> None:
    """Half a surrogate pair, or JSON nested very deep: the SDK's parser drops the line without a reply."""
    import json
    import selectors
    import subprocess

    params = stdio(live_server_proc, "--token", live_server_proc.tokens["agent-a"], "--toolsets", "maxsim")
    process = subprocess.Popen(
        [params.command, *params.args], cwd=params.cwd, env=params.env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None
    assert process.stdout is not None

    def ask(line: str) -> dict[str, Any]:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(line + "\n")
        process.stdin.flush()
        # A selector, not select(): a worker that has run many tests holds file descriptors past select's 1024.
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            assert selector.select(15), f"no reply to {line[:80]}"
        return dict(json.loads(process.stdout.readline()))

    def call(request_id: int, arguments: str) -> str:
        params = '{"name": "submit_lifecycle_event", "arguments": ' + arguments + "}"
        return '{"jsonrpc": "2.0", "id": ' + str(request_id) + ', "method": "tools/call", "params": ' + params + "}"

    try:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        assert "result" in ask(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
        process.stdin.write('{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        surrogate = ask(call(1, '{"event_type": "phase-started", "phase_name": "half \\ud800"}'))
        assert surrogate["id"] == 1
        assert surrogate["error"]["code"] == -32602
        assert "arguments.phase_name: must not contain an unpaired surrogate" in surrogate["error"]["message"]
        deep = ask(call(2, '{"event_type": "phase-started", "phase_name": ' + "[" * 3000 + "]" * 3000 + "}"))
        assert (deep["id"], deep["error"]["code"]) == (None, -32700)
        nul = ask(call(3, '{"event_type": "phase-started", "phase_name": "a\\u0000b"}'))
        assert nul["result"]["isError"] is True
        assert "arguments.phase_name: must not contain a NUL character" in nul["result"]["content"][0]["text"]
        assert "tools" in ask('{"jsonrpc": "2.0", "id": 4, "method": "tools/list"}')["result"]
    finally:
        process.stdin.close()
        process.wait(timeout=20)
