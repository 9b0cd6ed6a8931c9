"""Ask-Me's local conveniences over stdio (issue 16): the browser opens at a question nobody is watching,
at the address the running `serve` listens on; --no-open; a note at once when it cannot open.

ASK_ME_MCP_DEBUG is tested with HOOKBRIDGE_DEBUG, in test_open_and_debug."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import websockets
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from websockets.typing import Origin

from testing.live import ROOT, LiveServer, free_port, login_page_once_up, receive_until


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    """Tokens, a login and a database; its daphne answers the API. `serve` runs beside it per test."""
    live = LiveServer()
    live.setup()
    yield live
    live.close()


@pytest.fixture
def serve(server: LiveServer) -> Iterator[int]:
    """`manage.py serve` on the same database, on a port of its own: the dashboard a stdio user answers on."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--no-bootstrap"],
        cwd=ROOT, env=server.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    page = login_page_once_up(port)
    if page is None or page.status_code != 200:
        process.kill()
        pytest.fail("serve did not start")
    yield port
    process.terminate()
    process.wait(15)


def browser_script(tmp_path: Path, *, works: bool = True) -> tuple[str, Path]:
    """A $BROWSER that notes each URL it is asked to open (webbrowser honours $BROWSER)."""
    opened = tmp_path / "opened.txt"
    script = tmp_path / "browser.sh"
    script.write_text(f'#!/bin/sh\necho "$1" >> {opened}\nexit {0 if works else 1}\n')
    script.chmod(0o755)
    return str(script), opened


@asynccontextmanager
async def stdio_client_for(
    server: LiveServer, tmp_path: Path, browser: str, *args: str, **env: str
) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_stdio", "--token", server.tokens["agent-a"], *args],
        env={**server.env, "HOOKBRIDGE_OPEN_BROWSER": "1", "BROWSER": browser, **env},
        cwd=str(ROOT),
    )
    with (tmp_path / "stdio.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            yield client


async def ask_and_answer(server: LiveServer, client: Client, text: str, **call: Any) -> str:
    """Ask over stdio, answer through the API once it is pending, and return the question's id."""
    asking = asyncio.create_task(client.call_tool("ask_question", {"question": text}, **call))
    question = await server.wait_for_question(text)
    assert (await server.answer_via_api(question["id"], "ok")).status_code == 200
    result = await asyncio.wait_for(asking, 30)
    assert result.structured_content == {"answer": "ok"}
    return str(question["id"])


def opened_urls(opened: Path) -> list[str]:
    return opened.read_text().split() if opened.exists() else []


async def test_a_question_nobody_watches_opens_at_the_running_servers_address(
    server: LiveServer, serve: int, tmp_path: Path
) -> None:
    browser, opened = browser_script(tmp_path)
    async with stdio_client_for(server, tmp_path, browser) as client:
        question_id = await ask_and_answer(server, client, "Open me in the browser?")
    assert opened_urls(opened) == [f"http://127.0.0.1:{serve}/questions/{question_id}/"]


async def test_nothing_opens_while_a_dashboard_is_open_or_with_no_open(
    server: LiveServer, serve: int, tmp_path: Path
) -> None:
    browser, opened = browser_script(tmp_path)
    async with server.login() as person:
        cookie = server.cookie_header(person)
        async with websockets.connect(
            f"ws://127.0.0.1:{serve}/ws/dashboard/",
            additional_headers={"Cookie": cookie},
            origin=Origin(f"http://127.0.0.1:{serve}"),
        ) as dashboard:
            await receive_until(dashboard, 'id="question-list"')
            async with stdio_client_for(server, tmp_path, browser) as client:
                await ask_and_answer(server, client, "Someone is watching?")
        # The open decision is made before the call waits: the call has returned, so it was made.
        assert opened_urls(opened) == []
        async with stdio_client_for(server, tmp_path, browser, "--no-open") as client:
            await ask_and_answer(server, client, "Never open for me?")
        assert opened_urls(opened) == []
        async with stdio_client_for(server, tmp_path, browser) as client:
            last = await ask_and_answer(server, client, "Dashboard closed now?")
    assert opened_urls(opened) == [f"http://127.0.0.1:{serve}/questions/{last}/"]


async def test_when_no_browser_opens_the_agent_is_told_at_once(server: LiveServer, serve: int, tmp_path: Path) -> None:
    browser, _ = browser_script(tmp_path, works=False)
    text = "Tell me where to answer?"
    notes: list[str] = []
    values: list[float] = []
    told = asyncio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        values.append(progress)
        if message and "no browser could be opened" in message:
            notes.append(message)
            told.set()

    async with stdio_client_for(server, tmp_path, browser) as client:
        call = client.call_tool("ask_question", {"question": text}, progress_callback=on_progress)
        asking = asyncio.create_task(call)
        question = await server.wait_for_question(text)
        # Before anyone answers: the note is a progress message, not only part of the result.
        await asyncio.wait_for(told.wait(), 30)
        for _ in range(50):  # the wait's own first report follows the note
            if len(values) >= 2:
                break
            await asyncio.sleep(0.1)
        await server.answer_via_api(question["id"], "found it")
        await asyncio.wait_for(asking, 30)
    assert f"http://127.0.0.1:{serve}/questions/{question['id']}/" in notes[0]
    assert len(values) >= 2, values
    assert all(later > earlier for earlier, later in itertools.pairwise(values)), values


@pytest.mark.parametrize(
    ("era", "options"),
    [("legacy", {}), ("auto", {"log_level": "warning"})],  # auto: server/discover, then 2026-07-28
    ids=["handshake-era", "2026-opted-in"],
)
async def test_a_caller_without_a_progress_token_is_told_as_a_declared_log_message(
    server: LiveServer, serve: int, tmp_path: Path, era: str, options: dict[str, Any]
) -> None:
    browser, _ = browser_script(tmp_path, works=False)
    text = "Tell me by log?"
    logged: list[tuple[str, str]] = []
    told = asyncio.Event()

    async def on_log(params: Any) -> None:
        logged.append((params.level, str(params.data)))
        told.set()

    params = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_stdio", "--token", server.tokens["agent-a"]],
        env={**server.env, "HOOKBRIDGE_OPEN_BROWSER": "1", "BROWSER": browser},
        cwd=str(ROOT),
    )
    with (tmp_path / "stdio.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=era, logging_callback=on_log, **options) as client:
            declared = client.server_capabilities.logging
            assert declared is not None, "log messages are sent, so the capability is declared"
            asking = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
            question = await server.wait_for_question(text)
            await asyncio.wait_for(told.wait(), 30)
            await server.answer_via_api(question["id"], "found it")
            await asyncio.wait_for(asking, 30)
    assert logged[0][0] == "warning"
    assert "no browser could be opened" in logged[0][1]
