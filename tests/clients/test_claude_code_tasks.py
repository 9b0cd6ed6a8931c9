"""The real Claude Code CLI, interactive as people run it (its TUI, in tmux), against a server that serves
questions as MCP tasks (issue 40, HOOKBRIDGE_TASKS=auto). Offline: the model is testing/model_stand_in.py,
scripted to call the ask_question tool once.

Claude Code declares the Tasks extension only in its TUI (`claude -p` does not): it gets a task at once, tells
its model the call went to the background, polls tasks/get, and hands the result to the model when a person
has answered. The home the CLI runs with is prepared as a used install's is: onboarding done, the folder
trusted, the API key approved, the tool allowed, the server added at user scope.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from testing.claude_cli import CLAUDE, MODEL, Model, claude_terminal, scripted_model, terminal_env, used_home
from testing.live import LiveServer, serving
from testing.terminal import Terminal, until

pytestmark = [
    pytest.mark.skipif(not CLAUDE.exists(), reason="the Claude Code CLI is not installed (make claude-code-deps)"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux drives the CLI's terminal (make system-deps)"),
    # Each wait below has its own bound and says what did not happen; the suite's 120 s for a whole test is
    # less than a real TUI needs to start, ask and hear back on a loaded 2-core machine (114 s seen in CI),
    # and a pytest timeout says nothing of what the terminal showed.
    pytest.mark.timeout(360),
]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    # HOOKBRIDGE_DEBUG: the server logs each request's method, so a test can tell when the CLI has its tools.
    yield from serving(HOOKBRIDGE_TASKS="auto", HOOKBRIDGE_DEBUG="1")


def prepared_home(home: Path, project: Path, server: LiveServer) -> None:
    mcp = {
        "type": "http",
        "url": f"{server.url}/mcp",
        "headers": {"Authorization": f"Bearer {server.tokens['agent-a']}"},
    }
    used_home(home, project, mcp, allowed=("mcp__hookbridge__ask_question",))


async def asking_cli(server: LiveServer, home: Path, project: Path, env: dict[str, str]) -> Terminal:
    """The CLI started in a used install's home, told at its prompt to ask the team (its model calls the tool)."""
    prepared_home(home, project, server)
    listed = server.log().count("tools/list (request")
    terminal = claude_terminal(project, env)
    try:
        await until("the prompt", lambda: "for shortcuts" in terminal.screen(), 120, terminal.screen)
        # The TUI takes a prompt before its MCP servers have connected; on a loaded machine the model was then
        # asked without Hook Bridge's tools (and answered in words). A person waits for them too.
        await until(
            "the CLI listing the server's tools",
            lambda: server.log().count("tools/list (request") > listed,
            120,
            terminal.screen,
        )
        await terminal.type("Ask the team which region to deploy to")
    except BaseException:
        terminal.close()
        raise
    return terminal


async def asked_of(server: LiveServer, question: str, shown: Callable[[], str]) -> dict[str, Any]:
    """The question as the JSON API shows it, once the CLI's call has written it (what the CLI showed if not)."""
    found: dict[str, Any] | None = None

    async def look() -> None:
        nonlocal found
        found = next((q for q in await server.questions("pending") if q["question"] == question), None)

    deadline = time.monotonic() + 120
    while found is None and time.monotonic() < deadline:
        await look()
        await asyncio.sleep(0.25)
    assert found is not None, f"no question {question!r} within 120 s; the CLI shows:\n{shown()}"
    return found


async def answered_on_the_card(server: LiveServer, question: str, shown: Callable[[], str]) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for found in await server.questions():
            if found["question"] == question and found["status"] != "pending":
                return found
        await asyncio.sleep(0.25)
    raise AssertionError(f"{question!r} still pending after 60 s; the CLI shows:\n{shown()}")


def heard(model: Model, needle: str) -> str | None:
    """The first request to the model whose text holds `needle`, as text."""
    for request in model.requests():
        text = json.dumps(request.get("messages", []), ensure_ascii=False)
        if needle in text:
            return text
    return None


async def test_the_interactive_cli_asks_as_a_task_works_on_and_its_model_hears_the_answer_and_who_gave_it(
    server: LiveServer, tmp_path: Path
) -> None:
    question = "Which region, asked in the background?"
    command = "mcp:mcp__hookbridge__ask_question:" + json.dumps({"question": question})
    home, project = tmp_path / "home", tmp_path / "shop"
    project.mkdir()
    with scripted_model(command, tmp_path) as model:
        env = terminal_env(model, home, server.tokens["agent-a"])
        terminal = await asking_cli(server, home, project, env)
        try:
            asked = await asked_of(server, question, terminal.screen)
            # The call went to the background: the model was told so at once, before anyone answered.
            told = await until("the model told of the task", lambda: heard(model, "background"), 30, terminal.screen)
            assert "eu-west-1" not in told
            async with server.login() as browser:
                page = (await browser.get(f"/questions/{asked['id']}/")).text
            assert "Asked in the background" in page
            assert (await server.answer_via_api(asked["id"], "eu-west-1")).status_code == 200
            result = await until("the model hearing the answer", lambda: heard(model, "eu-west-1"), 60, terminal.screen)
        finally:
            terminal.close()
    notice = result[result.index("<task-notification>") : result.index("</task-notification>")]
    assert "Answered by answer-bot through the JSON API at " in notice, notice


async def test_a_cli_killed_while_its_task_works_hears_the_answer_when_its_session_is_resumed(
    server: LiveServer, tmp_path: Path
) -> None:
    question = "Which region, answered while the CLI was gone?"
    command = "mcp:mcp__hookbridge__ask_question:" + json.dumps({"question": question})
    home, project = tmp_path / "home", tmp_path / "shop"
    project.mkdir()
    with scripted_model(command, tmp_path) as model:
        env = terminal_env(model, home, server.tokens["agent-a"])
        terminal = await asking_cli(server, home, project, env)
        try:
            asked = await asked_of(server, question, terminal.screen)
            await until("the model told of the task", lambda: heard(model, "background"), 30, terminal.screen)
        finally:
            terminal.close()  # the CLI is gone (tmux kills it) while the task works
        (session,) = [path.stem for path in (home / ".claude" / "projects").glob("*/*.jsonl")]
        assert (await server.answer_via_api(asked["id"], "eu-central-1")).status_code == 200
        assert heard(model, "eu-central-1") is None
        resumed = claude_terminal(project, env, "--resume", session)
        try:
            result = await until(
                "the resumed model hearing it", lambda: heard(model, "eu-central-1"), 60, resumed.screen
            )
            await until("the terminal saying so", lambda: "completed" in resumed.screen(), 30, resumed.screen)
        finally:
            resumed.close()
    notice = result[result.index("<task-notification>") : result.index("</task-notification>")]
    assert "Answered by answer-bot through the JSON API at " in notice, notice


async def test_a_headless_run_declares_no_tasks_and_its_call_waits_for_the_answer(
    server: LiveServer, tmp_path: Path
) -> None:
    question = "Which region, asked by claude -p?"
    command = "mcp:mcp__hookbridge__ask_question:" + json.dumps({"question": question})
    home, project = tmp_path / "home", tmp_path / "shop"
    project.mkdir()
    with scripted_model(command, tmp_path) as model:
        env = terminal_env(model, home, server.tokens["agent-a"])
        prepared_home(home, project, server)
        cli = await asyncio.create_subprocess_exec(
            str(CLAUDE), "-p", "Ask the team which region to deploy to", "--model", MODEL,
            cwd=project, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        try:
            asked = await asked_of(server, question, lambda: "(claude -p: its output comes when it ends)")
            await asyncio.sleep(1)
            assert cli.returncode is None, "the call holds until a person answers"
            assert heard(model, "background") is None, "no task: nothing went to the background"
            assert (await server.answer_via_api(asked["id"], "us-east-1")).status_code == 200
            out, _ = await asyncio.wait_for(cli.communicate(), 90)
        finally:
            if cli.returncode is None:
                cli.kill()
                await cli.wait()
        told = heard(model, "us-east-1")
    assert await cli.wait() == 0, out.decode(errors="replace")
    assert told is not None
    assert "<task-notification>" not in told, "the answer came as the call's own result"


@pytest.fixture(scope="module")
def offering_server() -> Iterator[LiveServer]:
    yield from serving(HOOKBRIDGE_TASKS="auto", HOOKBRIDGE_ANSWER_IN_CLIENT="1", HOOKBRIDGE_DEBUG="1")


async def test_offered_in_the_terminal_a_person_there_answers_and_the_teams_card_is_answered_too(
    offering_server: LiveServer, tmp_path: Path
) -> None:
    server = offering_server
    question = "Which region, answered in the terminal?"
    options = [{"label": "Europe", "value": "eu-west-1"}, {"label": "US", "value": "us-east-1"}]
    command = "mcp:mcp__hookbridge__ask_question:" + json.dumps({"question": question, "options": options})
    home, project = tmp_path / "home", tmp_path / "shop"
    project.mkdir()
    with scripted_model(command, tmp_path) as model:
        env = terminal_env(model, home, server.tokens["agent-a"])
        terminal = await asking_cli(server, home, project, env)
        try:
            asked = await asked_of(server, question, terminal.screen)
            # Claude Code shows the task's input request as a form of its own, the question its message.
            shown = await until("the form", lambda: "requests your input" in terminal.screen(), 60, terminal.screen)
            assert shown
            assert question in terminal.screen()
            terminal.keys("Right")  # open the choice
            await until("the options", lambda: "◯ Europe" in terminal.screen(), 30, terminal.screen)
            terminal.keys("Enter")  # choose the first
            await until("Europe chosen", lambda: "✔ Choose one: Europe" in terminal.screen(), 30, terminal.screen)
            terminal.keys("Down")
            chosen = "❯ Accept"  # noqa: RUF001 (the pointer the TUI draws)
            await until("Accept", lambda: chosen in terminal.screen(), 30, terminal.screen)
            # Enter, again if the form is still up a few seconds later: a key sent while the TUI redraws is lost.
            for _ in range(5):
                terminal.keys("Enter")
                with contextlib.suppress(AssertionError):
                    await until("the form closing", lambda: "requests your input" not in terminal.screen(), 3, str)
                    break
            answered = await answered_on_the_card(server, question, terminal.screen)
            # The options are in the model's own tool call: the answer is known by who gave it.
            who = "Answered by agent-a (in Claude Code)"
            result = await until("the model hearing it", lambda: heard(model, who), 60, terminal.screen)
        finally:
            terminal.close()
    assert answered["id"] == asked["id"]
    assert answered["answer"]["text"] == "eu-west-1", answered["answer"]
    assert answered["answer"]["answeredBy"] == "agent-a (in Claude Code)"
    notice = result[result.index("<task-notification>") : result.index("</task-notification>")]
    assert "Answered by agent-a (in Claude Code) in the agent" in notice, notice
