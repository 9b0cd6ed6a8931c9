"""The real Gemini CLI (0.61, from npm) against a real daphne process, offline (issue 41).

The model is testing/gemini_stand_in.py, scripted to run one shell command; the hooks and the MCP server are
the ones `register gemini` writes; the token comes from the environment. `gemini -p … --yolo` would run any
command by itself: with Hook Bridge's BeforeTool hook it runs one only when the team allows it.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing import host_hooks
from testing.gemini_cli import GEMINI, GeminiModel, gemini_env, gemini_home, scripted_gemini
from testing.live import LiveServer, free_port, serving
from testing.terminal import Terminal, until

pytestmark = [
    pytest.mark.skipif(not GEMINI.exists(), reason="the Gemini CLI is not installed (make gemini-deps)"),
    pytest.mark.timeout(300),
]

COMMAND = "echo made > hi.txt"


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


async def gemini(project: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        str(GEMINI), "-p", "make hi.txt", "--yolo",
        cwd=project, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip


def registered(server: LiveServer, tmp_path: Path, url: str | None = None) -> tuple[Path, Path]:
    """A home and a project, with Hook Bridge registered as a headless run's (`gemini -p`) is."""
    home, project = tmp_path / "home", tmp_path / "shop"
    project.mkdir()
    settings = gemini_home(home)
    token = server.tokens["agent-a"]
    server.manage(
        "register",
        "gemini",
        "--settings-file",
        str(settings),
        "--url",
        url or server.url,
        "--token",
        token,
        "--headless",
    )
    return home, project


async def pending_approval(server: LiveServer, cli: asyncio.subprocess.Process) -> dict[str, Any]:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        for question in await server.questions("pending"):
            if question["kind"] == "approval" and question["payload"]["tool_input"].get("command") == COMMAND:
                return question
        assert cli.returncode is None, "the CLI ended before asking"
        await asyncio.sleep(0.2)
    raise AssertionError(f"no approval for {COMMAND!r}; server log:\n{server.log()[-3000:]}")


async def finished(cli: asyncio.subprocess.Process) -> str:
    """What the CLI printed once it ended; killed if it has not within two minutes (an "ask" with nobody to ask
    waits for ever)."""
    try:
        out, _ = await asyncio.wait_for(cli.communicate(), 120)
    finally:
        if cli.returncode is None:
            cli.kill()
            await cli.wait()
    return out.decode(errors="replace")


async def decided(server: LiveServer, tmp_path: Path, decision: dict[str, Any]) -> tuple[GeminiModel, Path, str]:
    home, project = registered(server, tmp_path)
    with scripted_gemini(COMMAND, tmp_path) as model:
        cli = await gemini(project, gemini_env(model, home, server.tokens["agent-a"]))
        try:
            approval = await pending_approval(server, cli)
            assert approval["payload"]["host_title"] == "Gemini CLI"
            assert not (project / "hi.txt").exists(), "held: nothing ran yet"
            assert (await server.answer_via_api(approval["id"], decision)).status_code == 200
            out = await finished(cli)
        finally:
            if cli.returncode is None:
                cli.kill()
                await cli.wait()
    return model, project, out


async def test_the_cli_runs_a_command_only_once_the_team_allows_it(server: LiveServer, tmp_path: Path) -> None:
    model, project, out = await decided(server, tmp_path, {"behavior": "allow"})
    assert (project / "hi.txt").read_text() == "made\n", out
    assert model.heard("Output: (empty)"), "the model was told the command ran"


async def test_a_deny_blocks_the_command_and_the_model_reads_the_reason(server: LiveServer, tmp_path: Path) -> None:
    model, project, out = await decided(server, tmp_path, {"behavior": "deny", "message": "Not on a Friday"})
    assert not (project / "hi.txt").exists(), out
    assert model.heard("Tool execution blocked: Not on a Friday"), out


async def test_with_the_server_down_the_yolo_cli_runs_nothing_it_was_not_allowed(
    server: LiveServer, tmp_path: Path
) -> None:
    home, project = registered(server, tmp_path, url=f"http://127.0.0.1:{free_port()}")
    with scripted_gemini(COMMAND, tmp_path) as model:
        out = await finished(await gemini(project, gemini_env(model, home, server.tokens["agent-a"])))
    assert not (project / "hi.txt").exists(), out
    assert model.heard("Tool execution blocked: Hook Bridge: cannot reach Hook Bridge at http://127.0.0.1:"), out


async def test_the_cli_asks_the_team_over_mcp_and_its_model_hears_the_answer(
    server: LiveServer, tmp_path: Path
) -> None:
    # The MCP server entry `register gemini` wrote, its token expanded by the CLI from $HOOKBRIDGE_TOKEN.
    home, project = registered(server, tmp_path)
    question = "Which region, asked from Gemini CLI?"
    ask = "mcp:mcp_hookbridge_ask_question:" + json.dumps({"question": question})
    with scripted_gemini(ask, tmp_path) as model:
        cli = await gemini(project, gemini_env(model, home, server.tokens["agent-a"]))
        try:
            asked = await server.wait_for_question(question, timeout=90)
            assert cli.returncode is None, "the CLI waits for the answer"
            assert (await server.answer_via_api(asked["id"], "eu-west-1")).status_code == 200
            out = await finished(cli)
        finally:
            if cli.returncode is None:
                cli.kill()
                await cli.wait()
    assert model.heard("eu-west-1"), out


def session_in(server: LiveServer, project: Path) -> str:
    """The Gemini CLI session the server keeps for a run in `project` (its name says the folder)."""
    said = server.manage(
        "shell", "-c",
        "from lifecycle.models import AgentSession; "
        f"print(AgentSession.objects.filter(host='gemini', name__endswith={str(project)!r}).latest('created_at').guid)",
    )  # fmt: skip
    return said.strip().splitlines()[-1]


async def test_a_persons_message_reaches_geminis_model_when_its_turn_ends(server: LiveServer, tmp_path: Path) -> None:
    # An MCP tool runs no AfterTool hook (its matcher is the gated tools), so the message waits for AfterAgent.
    home, project = registered(server, tmp_path)
    question = "Which region, with a word on the side?"
    ask = "mcp:mcp_hookbridge_ask_question:" + json.dumps({"question": question})
    with scripted_gemini(ask, tmp_path) as model:
        cli = await gemini(project, gemini_env(model, home, server.tokens["agent-a"]))
        try:
            asked = await server.wait_for_question(question, timeout=90)
            session = session_in(server, project)
            await host_hooks.message_on_page(server, session, "Use pnpm from now on")
            assert (await server.answer_via_api(asked["id"], "eu-west-1")).status_code == 200
            out = await finished(cli)
        finally:
            if cli.returncode is None:
                cli.kill()
                await cli.wait()
    assert model.heard("eu-west-1"), out
    assert model.heard("Use pnpm from now on"), out
    async with server.login() as http:
        timeline = (await http.get(f"/sessions/{session}/")).text
    assert "The tool said:" in timeline, "the turn's last words, from AfterAgent"
    assert cli.returncode == 0, out


async def interactive(server: LiveServer, tmp_path: Path, model: GeminiModel) -> tuple[Terminal, Path]:
    """Gemini CLI's terminal UI, as people run it (registered without --headless), told to make the file."""
    home, project = tmp_path / "home", tmp_path / "shop"
    project.mkdir()
    settings = gemini_home(home)
    token = server.tokens["agent-a"]
    server.manage("register", "gemini", "--settings-file", str(settings), "--url", server.url, "--token", token)
    terminal = Terminal(project, {**gemini_env(model, home, token), "TERM": "screen-256color"}, str(GEMINI))
    try:
        await until("the prompt", lambda: "Type your message" in terminal.screen(), 120, terminal.screen)
        await terminal.type("make hi.txt")
    except BaseException:
        terminal.close()
        raise
    return terminal, project


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux drives the CLI's terminal (make system-deps)")
async def test_the_interactive_cli_runs_a_command_once_the_team_and_then_its_own_prompt_allow_it(
    server: LiveServer, tmp_path: Path
) -> None:
    # A BeforeTool hook's "allow" cannot override the CLI's own approval mode (0.61: the hook may only ask or
    # deny), so in its default mode the team's allow is followed by its own prompt; `--yolo` leaves the team's.
    with scripted_gemini(COMMAND, tmp_path) as model:
        terminal, project = await interactive(server, tmp_path, model)
        try:
            approval = await host_hooks.pending_approval(server, COMMAND, timeout=90)
            await asyncio.sleep(1)  # a command that ran unasked would have written the file by now
            assert not (project / "hi.txt").exists(), f"held: nothing ran yet\n{terminal.screen()}"
            own = "Allow execution of"
            assert own not in terminal.screen(), "the team is asked first"
            assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
            await until("its own prompt, after the team's allow", lambda: own in terminal.screen(), 60, terminal.screen)
            assert not (project / "hi.txt").exists()
            await terminal.choose(own, "1")  # the person at the terminal: 1. Allow once
            await until("the command running", (project / "hi.txt").exists, 60, terminal.screen)
            await until("the model hearing it ran", lambda: model.heard("Output: (empty)"), 60, terminal.screen)
        finally:
            terminal.close()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux drives the CLI's terminal (make system-deps)")
async def test_a_command_cancelled_with_esc_never_runs_though_the_team_allows_it_after(
    server: LiveServer, tmp_path: Path
) -> None:
    # Esc cancels the turn but not its BeforeTool hook: Gemini CLI queues the next prompt until the hook ends.
    with scripted_gemini(COMMAND, tmp_path) as model:
        terminal, project = await interactive(server, tmp_path, model)
        try:
            approval = await host_hooks.pending_approval(server, COMMAND, timeout=90)
            await until("the hook running", lambda: "Executing Hook" in terminal.screen(), 30, terminal.screen)
            terminal.keys("Escape")
            await until("the turn cancelled", lambda: "Request cancelled" in terminal.screen(), 30, terminal.screen)
            await terminal.type("never mind")
            await until("the prompt queued", lambda: "Queued" in terminal.screen(), 30, terminal.screen)
            assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
            await until("the queued prompt sent", lambda: model.heard("never mind"), 60, terminal.screen)
            await asyncio.sleep(1)
            assert not (project / "hi.txt").exists(), f"a cancelled command ran\n{terminal.screen()}"
        finally:
            terminal.close()
