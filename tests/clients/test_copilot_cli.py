"""The real GitHub Copilot CLI (1.0.102, from npm) against a real daphne process, offline (issue 41).

Copilot CLI runs its own model provider here (BYOK: Anthropic's API, the scripted model Claude Code's tests
use, testing/model_stand_in.py) with COPILOT_OFFLINE=true. Its permissionRequest hook runs in `copilot -p` too,
before its own permission flow, so the prompt mode scripts and CI use is where a team approval matters most:
with nobody to ask there, Copilot CLI refuses what nobody allowed. Its terminal UI, as people run it, waits on
the same hook (it shows no prompt of its own meanwhile): one test drives it in tmux.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing.claude_cli import Model, scripted_model
from testing.copilot_cli import COPILOT, copilot_env, heard
from testing.host_hooks import add_rule, drop_rules, pending_approval
from testing.live import LiveServer, free_port, serving
from testing.terminal import Terminal, until

pytestmark = [
    pytest.mark.skipif(not COPILOT.exists(), reason="the Copilot CLI is not installed (make copilot-deps)"),
    pytest.mark.timeout(300),
]

COMMAND = "echo made > hi.txt"


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


async def copilot(
    server: LiveServer, tmp_path: Path, model: Model, url: str | None = None
) -> asyncio.subprocess.Process:
    """`copilot -p` in a project, its home registered with Hook Bridge as `register copilot` does."""
    home, project = tmp_path / "home", tmp_path / "shop"
    project.mkdir()
    token = server.tokens["agent-a"]
    server.manage(
        "register", "copilot", "--copilot-home", str(home / ".copilot"), "--url", url or server.url, "--token", token
    )
    return await asyncio.create_subprocess_exec(
        str(COPILOT), "-p", "Do the task",
        cwd=project, env=copilot_env(model, home, token),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip


async def finished(cli: asyncio.subprocess.Process) -> str:
    try:
        out, _ = await asyncio.wait_for(cli.communicate(), 120)
    finally:
        if cli.returncode is None:
            cli.kill()
            await cli.wait()
    return out.decode(errors="replace")


async def decided(server: LiveServer, tmp_path: Path, decision: dict[str, Any]) -> tuple[Model, Path, str]:
    with scripted_model(COMMAND, tmp_path) as model:
        cli = await copilot(server, tmp_path, model)
        try:
            approval = await pending_approval(server, COMMAND, timeout=90)
            assert approval["payload"]["host_title"] == "Copilot CLI"
            assert approval["payload"]["cwd"] == str(tmp_path / "shop")
            assert not (tmp_path / "shop" / "hi.txt").exists(), "held: nothing ran yet"
            assert (await server.answer_via_api(approval["id"], decision)).status_code == 200
        finally:
            out = await finished(cli)
    return model, tmp_path / "shop", out


async def test_copilot_runs_a_command_only_once_the_team_allows_it(server: LiveServer, tmp_path: Path) -> None:
    model, project, out = await decided(server, tmp_path, {"behavior": "allow"})
    assert (project / "hi.txt").read_text() == "made\n", out
    assert heard(model, "completed with exit code 0"), out


async def test_a_deny_runs_nothing_and_the_model_reads_the_reason(server: LiveServer, tmp_path: Path) -> None:
    model, project, out = await decided(server, tmp_path, {"behavior": "deny", "message": "Not on a Friday"})
    assert not (project / "hi.txt").exists(), out
    assert heard(model, "Permission denied by a PermissionRequest hook: Not on a Friday"), out


async def test_a_team_rule_decides_copilots_command_with_no_card(server: LiveServer, tmp_path: Path) -> None:
    add_rule(server, "Bash", "^echo made", "allow", "")
    await asyncio.sleep(1.2)  # the server re-reads rules a second after its last read
    try:
        with scripted_model(COMMAND, tmp_path) as model:
            out = await finished(await copilot(server, tmp_path, model))
        assert (tmp_path / "shop" / "hi.txt").exists(), out
        decided = [q for q in await server.questions() if q["payload"].get("cwd") == str(tmp_path / "shop")]
        assert [q["status"] for q in decided] == ["answered"], "the rule's decision is in the history, no card"
        assert decided[0]["answer"]["answeredBy"].startswith("rule #")
    finally:
        drop_rules(server)
        await asyncio.sleep(1.2)


async def test_with_the_server_down_copilot_runs_nothing_nobody_allowed(server: LiveServer, tmp_path: Path) -> None:
    with scripted_model(COMMAND, tmp_path) as model:
        out = await finished(await copilot(server, tmp_path, model, url=f"http://127.0.0.1:{free_port()}"))
    assert not (tmp_path / "shop" / "hi.txt").exists(), out
    assert heard(model, "Permission denied"), out


async def test_copilots_model_asks_the_team_over_mcp_and_hears_the_answer(server: LiveServer, tmp_path: Path) -> None:
    question = "Which region, asked from Copilot CLI?"
    ask = "mcp:hookbridge-ask_question:" + json.dumps({"question": question})
    with scripted_model(ask, tmp_path) as model:
        cli = await copilot(server, tmp_path, model)
        try:
            asked = await server.wait_for_question(question, timeout=90)
            assert asked["kind"] == "question", "calling Hook Bridge's own tool needs nobody's approval"
            assert (await server.answer_via_api(asked["id"], "eu-west-1")).status_code == 200
        finally:
            out = await finished(cli)
    assert heard(model, "eu-west-1"), out


async def test_a_persons_message_reaches_copilots_model_when_its_turn_ends(server: LiveServer, tmp_path: Path) -> None:
    with scripted_model(COMMAND, tmp_path) as model:
        cli = await copilot(server, tmp_path, model)
        try:
            approval = await pending_approval(server, COMMAND, timeout=90)
            async with server.login() as http:
                sent = await http.post(
                    f"/sessions/{approval['session']}/messages",
                    data={"text": "Use pnpm from now on"},
                    headers={"HX-Request": "true"},
                )
            assert sent.status_code == 200, sent.text
            assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
        finally:
            out = await finished(cli)
    assert heard(model, "Use pnpm from now on"), out


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux drives the CLI's terminal (make system-deps)")
async def test_copilots_interactive_tui_runs_a_command_only_once_the_team_allows_it(
    server: LiveServer, tmp_path: Path
) -> None:
    # As people run it: its terminal UI (in tmux), the folder trusted at its first question, the task typed in.
    home, project = tmp_path / "home", tmp_path / "shop"
    project.mkdir()
    token = server.tokens["agent-a"]
    server.manage(
        "register", "copilot", "--copilot-home", str(home / ".copilot"), "--url", server.url, "--token", token
    )
    with scripted_model(COMMAND, tmp_path) as model:
        env = {**copilot_env(model, home, token), "TERM": "screen-256color"}
        terminal = Terminal(project, env, str(COPILOT))
        try:
            trusted = "Do you trust the files in this folder?"
            await until("its question about the folder", lambda: trusted in terminal.screen(), 120, terminal.screen)
            await terminal.choose(trusted, "Enter")
            await until("the prompt", lambda: "Manual Approval" in terminal.screen(), 60, terminal.screen)
            await terminal.type("Do the task")
            approval = await pending_approval(server, COMMAND, timeout=90)
            assert approval["payload"]["host_title"] == "Copilot CLI"
            await asyncio.sleep(1)  # a command that ran unasked would have written the file by now
            assert not (project / "hi.txt").exists(), f"held: nothing ran yet\n{terminal.screen()}"
            assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
            await until("the command running", (project / "hi.txt").exists, 60, terminal.screen)
            await until(
                "the model hearing it ran", lambda: heard(model, "completed with exit code 0"), 60, terminal.screen
            )
        finally:
            terminal.close()
    assert (project / "hi.txt").read_text() == "made\n"
