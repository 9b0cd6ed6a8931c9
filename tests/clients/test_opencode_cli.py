"""The real OpenCode (1.18.33, from npm), in its terminal UI as people run it (tmux), against a real daphne
process, offline (issue 41).

OpenCode has no command hooks and never calls a plugin's `permission.ask`; `register opencode` writes a plugin
that sends each `permission.asked` event to the team and replies through OpenCode's own client. `opencode run`
rejects a permission request at once, before any plugin could answer, so approvals are the TUI's. The model is
testing/model_stand_in.py (Anthropic's API, OpenCode's anthropic provider pointed at it).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.claude_cli import Model, scripted_model
from testing.host_hooks import card_left, pending_approval
from testing.live import LiveServer, free_port, serving
from testing.opencode_cli import OPENCODE, opencode_config, opencode_env
from testing.terminal import Terminal, until

pytestmark = [
    pytest.mark.skipif(not OPENCODE.exists(), reason="OpenCode is not installed (make opencode-deps)"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux drives OpenCode's terminal (make system-deps)"),
    pytest.mark.timeout(300),
]

COMMAND = "echo made > hi.txt"


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


class Run:
    """OpenCode's TUI started on a prompt in a project, Hook Bridge registered in its config folder."""

    def __init__(self, server: LiveServer, tmp_path: Path, model: Model, url: str | None = None) -> None:
        home, self.project = tmp_path / "home", tmp_path / "shop"
        self.project.mkdir()
        folder = opencode_config(home, model)
        token = server.tokens["agent-a"]
        server.manage("register", "opencode", "--config-dir", str(folder), "--url", url or server.url, "--token", token)
        self.terminal = Terminal(self.project, opencode_env(home, token), str(OPENCODE), "--prompt", "Do the task")

    def made(self) -> bool:
        return (self.project / "hi.txt").exists()


async def test_opencode_runs_a_command_only_once_the_team_allows_it(server: LiveServer, tmp_path: Path) -> None:
    with scripted_model(COMMAND, tmp_path) as model:
        run = Run(server, tmp_path, model)
        try:
            approval = await pending_approval(server, COMMAND, timeout=120)
            assert (approval["payload"]["host_title"], approval["payload"]["host_tool_name"]) == ("OpenCode", "bash")
            async with server.login() as browser:
                page = (await browser.get(f"/questions/{approval['id']}/")).text
            assert f"OpenCode in {run.project}" in page
            await asyncio.sleep(1)
            assert not run.made(), "held: nothing ran yet"
            assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
            await until("the command running", run.made, 60, run.terminal.screen)
        finally:
            run.terminal.close()


async def test_a_deny_runs_nothing_and_takes_opencodes_own_prompt_away(server: LiveServer, tmp_path: Path) -> None:
    with scripted_model(COMMAND, tmp_path) as model:
        run = Run(server, tmp_path, model)
        try:
            approval = await pending_approval(server, COMMAND, timeout=120)
            await until(
                "OpenCode's own prompt", lambda: "Permission required" in run.terminal.screen(), 30, run.terminal.screen
            )
            assert (await server.answer_via_api(approval["id"], {"behavior": "deny", "message": "No"})).is_success
            await until(
                "the prompt answered",
                lambda: "Permission required" not in run.terminal.screen(),
                30,
                run.terminal.screen,
            )
            await asyncio.sleep(1)
            assert not run.made()
        finally:
            run.terminal.close()


async def test_a_command_allowed_at_opencodes_own_prompt_runs_and_its_card_leaves_the_dashboard(
    server: LiveServer, tmp_path: Path
) -> None:
    with scripted_model(COMMAND, tmp_path) as model:
        run = Run(server, tmp_path, model)
        try:
            approval = await pending_approval(server, COMMAND, timeout=120)
            await until(
                "OpenCode's own prompt", lambda: "Permission required" in run.terminal.screen(), 30, run.terminal.screen
            )
            # The person at the terminal allows it (the prompt's first choice, Allow once).
            await run.terminal.choose("Permission required", "Enter")
            await until("the command running", run.made, 60, run.terminal.screen)
            left = await card_left(server, approval["id"])
        finally:
            run.terminal.close()
    assert left is not None, "the card still waits for a decision the terminal made"
    assert (left["status"], left["cancelReason"]) == ("cancelled", "host_decided")


async def test_with_the_server_down_opencodes_own_prompt_asks_and_nothing_runs(
    server: LiveServer, tmp_path: Path
) -> None:
    with scripted_model(COMMAND, tmp_path) as model:
        run = Run(server, tmp_path, model, url=f"http://127.0.0.1:{free_port()}")
        try:
            await until(
                "OpenCode's own prompt",
                lambda: "Permission required" in run.terminal.screen(),
                120,
                run.terminal.screen,
            )
            await asyncio.sleep(2)
            assert "Permission required" in run.terminal.screen(), "still asking: no silent allow"
            assert not run.made()
        finally:
            run.terminal.close()


async def test_opencodes_model_asks_the_team_over_mcp_and_hears_the_answer(server: LiveServer, tmp_path: Path) -> None:
    question = "Which region, asked from OpenCode?"
    ask = "mcp:hookbridge_ask_question:" + json.dumps({"question": question})
    with scripted_model(ask, tmp_path) as model:
        run = Run(server, tmp_path, model)
        try:
            asked = await server.wait_for_question(question, timeout=120)
            assert (await server.answer_via_api(asked["id"], "eu-west-1")).status_code == 200
            heard = lambda: any("eu-west-1" in json.dumps(r.get("messages", [])) for r in model.requests())  # noqa: E731
            await until("the model hearing the answer", heard, 60, run.terminal.screen)
        finally:
            run.terminal.close()
