"""The real Claude Code CLI's approvals in its terminal UI (in tmux), as people run it, offline against
testing/model_stand_in.py, which asks for one Bash command. The hooks are the ones `register_claude --hooks`
writes into the project; the home is a used install's.

With the team there, the command waits for a person's decision on the card; with the server down, Claude Code's
HTTP hook fails and its own prompt asks the person at the terminal: nothing runs that nobody allowed.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing.claude_cli import AUTO_MODEL, CLAUDE, MODEL, claude_terminal, scripted_model, terminal_env, used_home
from testing.host_hooks import card_left
from testing.live import LiveServer, free_port, serving
from testing.terminal import Terminal, until

pytestmark = [
    pytest.mark.skipif(not CLAUDE.exists(), reason="the Claude Code CLI is not installed (make claude-code-deps)"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux drives the CLI's terminal (make system-deps)"),
    # Each wait has its own bound and says what the terminal showed; a whole TUI run on a loaded machine can
    # pass the suite's 120 s.
    pytest.mark.timeout(300),
]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


def registered(server: LiveServer, tmp_path: Path, url: str, *options: str) -> tuple[Path, Path]:
    """A used home and a project whose hooks `register_claude --hooks` pointed at `url`."""
    home, project = tmp_path / "home", tmp_path / "shop"
    project.mkdir()
    used_home(home, project)
    server.manage(
        "register", "claude-code", "--hooks", "--project", str(project), "--url", url,
        "--token", server.tokens["agent-a"],
        *options,
    )  # fmt: skip
    return home, project


async def started(project: Path, env: dict[str, str], *, model: str = MODEL, ready: str = "for shortcuts") -> Terminal:
    """The TUI, told at its prompt to make the file (its model asks for the Bash command)."""
    terminal = claude_terminal(project, env, model=model)
    try:
        await until("the prompt", lambda: ready in terminal.screen(), 120, terminal.screen)
        await terminal.type("make hi.txt")
    except BaseException:
        terminal.close()
        raise
    return terminal


async def pending_approval(server: LiveServer, command: str, terminal: Terminal) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for question in await server.questions("pending"):
            if question["kind"] == "approval" and question["payload"]["tool_input"].get("command") == command:
                return question
        await asyncio.sleep(0.25)
    raise AssertionError(f"no approval for {command!r} within 120 s; the terminal shows:\n{terminal.screen()}")


TEAM = "echo team > hi.txt && cat hi.txt"


async def test_the_interactive_cli_runs_a_command_once_a_person_allows_it_on_the_card_and_its_own_prompt_goes(
    server: LiveServer, tmp_path: Path
) -> None:
    # The TUI asks at its own prompt while the hook waits: whichever is answered first decides.
    home, project = registered(server, tmp_path, server.url)
    with scripted_model(TEAM, tmp_path) as model:
        terminal = await started(project, terminal_env(model, home, server.tokens["agent-a"]))
        try:
            approval = await pending_approval(server, TEAM, terminal)
            assert approval["payload"]["host_title"] == "Claude Code"
            await until("its own prompt", lambda: "Do you want to proceed?" in terminal.screen(), 60, terminal.screen)
            assert not (project / "hi.txt").exists(), "held: nothing ran before a person decided"
            assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
            await until("the command running", (project / "hi.txt").exists, 60, terminal.screen)
            await until(
                "its own prompt going", lambda: "Do you want to proceed?" not in terminal.screen(), 60, terminal.screen
            )
            await until(
                "the model hearing the output", lambda: "The tool said: team" in terminal.screen(), 60, terminal.screen
            )
        finally:
            terminal.close()
    assert (project / "hi.txt").read_text() == "team\n"


TERMINAL = "echo here > hi.txt && cat hi.txt"


async def test_a_command_allowed_at_the_interactive_clis_own_prompt_runs_and_its_card_leaves_the_dashboard(
    server: LiveServer, tmp_path: Path
) -> None:
    home, project = registered(server, tmp_path, server.url)
    with scripted_model(TERMINAL, tmp_path) as model:
        terminal = await started(project, terminal_env(model, home, server.tokens["agent-a"]))
        try:
            approval = await pending_approval(server, TERMINAL, terminal)
            await until("its own prompt", lambda: "Do you want to proceed?" in terminal.screen(), 60, terminal.screen)
            # The person at the terminal allows it (the prompt's first choice, Yes).
            await terminal.choose("Do you want to proceed?", "Enter")
            await until("the command running", (project / "hi.txt").exists, 60, terminal.screen)

            left = await card_left(server, approval["id"], timeout=60)
        finally:
            terminal.close()
    assert left is not None, "the card still waits for a decision the terminal made"
    assert left["status"] == "cancelled"
    assert left["cancelReason"] == "host_decided"
    assert (project / "hi.txt").read_text() == "here\n"


DOWN = "echo asked > hi.txt && cat hi.txt"


async def test_with_the_server_down_the_interactive_cli_asks_at_its_own_prompt_and_runs_only_once_allowed_there(
    server: LiveServer, tmp_path: Path
) -> None:
    home, project = registered(server, tmp_path, f"http://127.0.0.1:{free_port()}")
    with scripted_model(DOWN, tmp_path) as model:
        terminal = await started(project, terminal_env(model, home, server.tokens["agent-a"]))
        try:
            await until(
                "Claude Code's own prompt", lambda: "Do you want to proceed?" in terminal.screen(), 120, terminal.screen
            )
            assert "echo asked > hi.txt" in terminal.screen(), "its prompt names the command"
            await asyncio.sleep(1)  # a command that ran unasked would have written the file by now
            assert not (project / "hi.txt").exists(), "nothing runs while its prompt asks"
            # The person at the terminal allows it (the prompt's first choice, Yes).
            await terminal.choose("Do you want to proceed?", "Enter")
            await until("the command running", (project / "hi.txt").exists, 60, terminal.screen)
        finally:
            terminal.close()
    assert (project / "hi.txt").read_text() == "asked\n"
    assert not [q for q in await server.questions() if q["payload"].get("tool_input", {}).get("command") == DOWN]


AUTO = "echo auto > hi.txt && cat hi.txt"


async def test_in_auto_mode_a_command_registered_with_approve_waits_for_the_team_though_claude_code_would_run_it(
    server: LiveServer, tmp_path: Path
) -> None:
    # With a model that has it, this CLI's terminal UI starts in auto mode, where it runs what it judges
    # low-risk without asking, so no PermissionRequest comes (seen: this command ran, no card). `--approve Bash`
    # adds a PreToolUse hook that waits for the team on every Bash command, whatever the mode.
    home, project = registered(server, tmp_path, server.url, "--approve", "Bash")
    with scripted_model(AUTO, tmp_path) as model:
        env = terminal_env(model, home, server.tokens["agent-a"])
        terminal = await started(project, env, model=AUTO_MODEL, ready="auto mode on")
        try:
            approval = await pending_approval(server, AUTO, terminal)
            assert approval["payload"]["event"] == "PreToolUse"
            await asyncio.sleep(1)  # a command that ran unasked would have written the file by now
            assert not (project / "hi.txt").exists(), "held in auto mode until the team decides"
            assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
            await until("the command running", (project / "hi.txt").exists, 60, terminal.screen)
            await until(
                "the model hearing the output", lambda: "The tool said: auto" in terminal.screen(), 60, terminal.screen
            )
        finally:
            terminal.close()
    assert (project / "hi.txt").read_text() == "auto\n"
