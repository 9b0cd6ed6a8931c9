"""The real Codex CLI (0.171, from npm), interactive as people run it (its TUI, in tmux), against a real daphne
process, offline (issue 41).

The model is testing/codex_stand_in.py, scripted to run one shell command outside Codex's sandbox (so Codex
asks for approval, and its PermissionRequest hook runs) or to call one MCP tool; the hooks, their trust and the
MCP server are what `register codex` writes; the token comes from the environment. `codex exec` never asks for
approval, so a person's approval is the TUI's.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from testing.approval_world import ISSUE_POLICY, RELEASES, pending_for, shop_with_policy
from testing.codex_cli import CODEX, CodexModel, codex_env, codex_home, scripted_codex
from testing.host_hooks import add_rule, drop_rules, pending_approval
from testing.live import LiveServer, free_port, serving
from testing.terminal import Terminal, until

pytestmark = [
    pytest.mark.skipif(not CODEX.exists(), reason="the Codex CLI is not installed (make codex-deps)"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux drives the CLI's terminal (make system-deps)"),
    # Each wait has its own bound and says what the terminal showed.
    pytest.mark.timeout(300),
]

COMMAND = "echo made > hi.txt"


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


def stop_daemons(under: Path, quiet: float) -> None:
    """Kill the app-server daemons Codex's TUI started from homes under `under`, until none has been seen for
    `quiet` seconds (a TUI starts its daemon a moment after it starts, and leaves it running when it goes)."""
    daemon = re.escape(str(under)) + r".*/\.codex/packages/"
    deadline = quiet_since = time.monotonic()
    deadline += 15
    while time.monotonic() < deadline:
        if subprocess.run(["pkill", "-f", daemon], check=False).returncode == 0:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > quiet:
            break
        time.sleep(0.1)


@pytest.fixture(scope="module", autouse=True)
def no_daemon_left(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One started late can outlive its test's own stop (two did, in a loaded run): the module's end looks again."""
    yield
    stop_daemons(tmp_path_factory.getbasetemp(), quiet=3)


class Run:
    """Codex's TUI started on a prompt in a project whose home has Hook Bridge registered, its model scripted."""

    def __init__(
        self, server: LiveServer, tmp_path: Path, model: CodexModel, url: str | None = None, token: str = ""
    ) -> None:
        home, self.project = tmp_path / "home", tmp_path / "shop"
        self.project.mkdir()
        folder = codex_home(home, model)
        token = token or server.tokens["agent-a"]
        server.manage("register", "codex", "--codex-home", str(folder), "--url", url or server.url, "--token", token)
        self.model, self.home = model, home
        self.terminal = Terminal(self.project, codex_env(home, token), str(CODEX), "Do the task")

    def close(self) -> None:
        """The TUI's tmux session, and the app-server daemon Codex's TUI starts from its home and leaves running."""
        self.terminal.close()
        stop_daemons(self.home, quiet=1)

    def made(self) -> bool:
        return (self.project / "hi.txt").exists()

    async def heard(self, needle: str) -> None:
        await until(f"the model hearing {needle!r}", lambda: self.model.heard(needle), 90, self.terminal.screen)


async def approval_of(server: LiveServer, run: Run) -> dict[str, Any]:
    try:
        return await pending_approval(server, COMMAND, timeout=120)
    except AssertionError:
        raise AssertionError(f"no approval for {COMMAND!r}; the terminal shows:\n{run.terminal.screen()}") from None


async def test_the_tui_runs_a_command_only_once_the_team_allows_it_and_the_card_names_codex(
    server: LiveServer, tmp_path: Path
) -> None:
    with scripted_codex(COMMAND, tmp_path) as model:
        run = Run(server, tmp_path, model)
        try:
            approval = await approval_of(server, run)
            assert approval["payload"]["host_title"] == "Codex"
            async with server.login() as browser:
                page = (await browser.get(f"/questions/{approval['id']}/")).text
            assert f"Codex in {run.project}" in page
            await asyncio.sleep(1)
            assert not run.made(), "held: nothing ran yet"
            assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
            await until("the command running", run.made, 60, run.terminal.screen)
            await run.heard("Process exited with code 0")
        finally:
            run.close()
    assert (run.project / "hi.txt").read_text() == "made\n"


async def test_a_deny_runs_nothing_and_codexs_model_reads_the_reason(server: LiveServer, tmp_path: Path) -> None:
    with scripted_codex(COMMAND, tmp_path) as model:
        run = Run(server, tmp_path, model)
        try:
            approval = await approval_of(server, run)
            decision = {"behavior": "deny", "message": "Not on a Friday"}
            assert (await server.answer_via_api(approval["id"], decision)).status_code == 200
            await run.heard("Not on a Friday")
        finally:
            run.close()
    assert not run.made()


async def test_a_team_rule_decides_codexs_command_with_no_card(server: LiveServer, tmp_path: Path) -> None:
    add_rule(server, "Bash", "^echo made", "allow", "")
    await asyncio.sleep(1.2)  # the server re-reads rules a second after its last read
    try:
        with scripted_codex(COMMAND, tmp_path) as model:
            run = Run(server, tmp_path, model)
            try:
                await until("the command running", run.made, 120, run.terminal.screen)
            finally:
                run.close()
        decided = [q for q in await server.questions() if q["payload"].get("cwd") == str(run.project)]
        assert [q["status"] for q in decided] == ["answered"], "the rule's decision is in the history, no card"
        assert decided[0]["answer"]["answeredBy"].startswith("rule #")
    finally:
        drop_rules(server)
        await asyncio.sleep(1.2)


async def test_with_the_server_down_codex_asks_at_its_own_prompt_and_runs_nothing_unasked(
    server: LiveServer, tmp_path: Path
) -> None:
    with scripted_codex(COMMAND, tmp_path) as model:
        run = Run(server, tmp_path, model, url=f"http://127.0.0.1:{free_port()}")
        try:
            shown = await until(
                "Codex's own approval prompt",
                lambda: "Would you like to run the following command?" in run.terminal.screen(),
                120,
                run.terminal.screen,
            )
            assert shown
            await asyncio.sleep(1)
            assert not run.made(), "no silent allow"
        finally:
            run.close()


async def test_codexs_model_asks_the_team_over_mcp_and_hears_the_answer(server: LiveServer, tmp_path: Path) -> None:
    question = "Which region, asked from Codex?"
    ask = "mcp:mcp__hookbridge__ask_question:" + json.dumps({"question": question})
    with scripted_codex(ask, tmp_path) as model:
        run = Run(server, tmp_path, model)
        try:
            deadline = time.monotonic() + 120
            asked = None
            while asked is None and time.monotonic() < deadline:
                asked = next((q for q in await server.questions("pending") if q["question"] == question), None)
                await asyncio.sleep(0.25)
            assert asked is not None, f"no question; the terminal shows:\n{run.terminal.screen()}"
            assert asked["kind"] == "question", "asking the team needs no approval of its own"
            assert (await server.answer_via_api(asked["id"], "eu-west-1")).status_code == 200
            await run.heard("eu-west-1")
        finally:
            run.close()


@pytest.fixture(scope="module")
def shop(server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Issue 53's shop on the module's server: pat's agent asks with pat's token under the issue's policy file,
    and a release policy that nobody decides within 3 s is denied by its fallback."""
    return shop_with_policy(server, tmp_path_factory.mktemp("policy"), ISSUE_POLICY + RELEASES)


async def vote(server: LiveServer, raw: str, question_id: str) -> int:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw}"}, timeout=60) as http:
        body = {"questionId": question_id, "answer": {"behavior": "allow"}}
        return (await http.post(f"{server.url}/api/mcp-answer", json=body)).status_code


PUSH = "git push origin main || echo made > hi.txt"


async def test_under_a_two_person_policy_codex_runs_a_push_only_after_the_second_person_allows(
    server: LiveServer, shop: dict[str, str], tmp_path: Path
) -> None:
    with scripted_codex(PUSH, tmp_path) as model:
        run = Run(server, tmp_path, model, token=shop["agent"])
        try:
            approval = await pending_for(server, shop["ann"], PUSH, 120, run.terminal.screen)
            assert approval["requirement"]["quorum"] == 2
            assert "not pat, whose agent asks" in approval["requirement"]["sentence"]
            assert await vote(server, shop["ann"], approval["id"]) == 202
            assert await vote(server, shop["pat"], approval["id"]) == 403, "pat's own agent asks: not pat"
            await asyncio.sleep(1)
            assert not run.made(), "one allow of two lets nothing run"
            assert await vote(server, shop["bob"], approval["id"]) == 200
            await until("the command running", run.made, 60, run.terminal.screen)
        finally:
            run.close()


async def test_nobody_deciding_in_time_reaches_codexs_model_as_the_policy_s_deny_with_its_reason(
    server: LiveServer, shop: dict[str, str], tmp_path: Path
) -> None:
    release = "make release > hi.txt"
    with scripted_codex(release, tmp_path) as model:
        run = Run(server, tmp_path, model, token=shop["agent"])
        try:
            await run.heard("Denied by the policy 'releases time out': nobody decided within 3 s")
        finally:
            run.close()
    assert not run.made()
