"""Issue 53 with the real Claude Code CLI (headless, offline against the scripted model): a push under the issue's
two-person policy runs only after the second person allows, and a policy's fallback deny reaches the model with
its reason. The CLI's hooks are the ones `register_claude --hooks` writes; pat's agent asks with pat's token.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from testing.approval_world import ISSUE_POLICY, RELEASES, pending_for, shop_with_policy
from testing.claude_cli import CLAUDE, MODEL, Model, cli_env, scripted_model
from testing.live import LiveServer, serving

pytestmark = [
    pytest.mark.skipif(not CLAUDE.exists(), reason="the Claude Code CLI is not installed (make claude-code-deps)"),
]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    for server in serving():
        yield server, shop_with_policy(server, tmp_path_factory.mktemp("policy"), ISSUE_POLICY + RELEASES)


@pytest.fixture
def model(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Model]:
    with scripted_model(request.param, tmp_path) as found:
        yield found


def registered(server: LiveServer, raw: dict[str, str], tmp_path: Path) -> Path:
    project = tmp_path / "shop"
    project.mkdir()
    server.manage(
        "register", "claude-code", "--hooks", "--project", str(project), "--url", server.url, "--token", raw["agent"]
    )
    return project


async def run_cli(project: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        str(CLAUDE), "-p", "ship it", "--model", MODEL, cwd=project, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip


async def answer(server: LiveServer, raw: str, question_id: str) -> httpx2.Response:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw}"}, timeout=60) as http:
        body = {"questionId": question_id, "answer": {"behavior": "allow"}}
        return await http.post(f"{server.url}/api/mcp-answer", json=body)


PUSH = "git push origin main || echo pushed > hi.txt"


@pytest.mark.parametrize("model", [PUSH], indirect=True)
async def test_a_push_runs_only_after_the_second_person_allows(
    shop: tuple[LiveServer, dict[str, str]], model: Model, tmp_path: Path
) -> None:
    server, raw = shop
    project = registered(server, raw, tmp_path)
    cli = await run_cli(project, cli_env(model, tmp_path / "home", raw["agent"]))
    try:
        approval = await pending_for(server, raw["ann"], PUSH)
        assert approval["payload"]["cwd"] == str(project)
        first = await answer(server, raw["ann"], approval["id"])
        assert first.status_code == 202, first.text
        own = await answer(server, raw["pat"], approval["id"])
        assert own.status_code == 403
        await asyncio.sleep(1.0)
        running = cli.returncode is None
        assert running, "one allow of two lets nothing run"
        assert not (project / "hi.txt").exists()
        assert (await answer(server, raw["bob"], approval["id"])).status_code == 200
        out, _ = await asyncio.wait_for(cli.communicate(), 60)
    finally:
        if cli.returncode is None:
            cli.kill()
    assert cli.returncode == 0, out.decode(errors="replace")
    assert (project / "hi.txt").read_text() == "pushed\n"


RELEASE = "make release > released.txt"


@pytest.mark.parametrize("model", [RELEASE], indirect=True)
async def test_nobody_deciding_reaches_the_model_as_the_policy_s_deny_with_its_reason(
    shop: tuple[LiveServer, dict[str, str]], model: Model, tmp_path: Path
) -> None:
    server, raw = shop
    project = registered(server, raw, tmp_path)
    cli = await run_cli(project, cli_env(model, tmp_path / "home", raw["agent"]))
    out, _ = await asyncio.wait_for(cli.communicate(), 90)
    assert cli.returncode == 0, out.decode(errors="replace")
    assert not (project / "released.txt").exists()
    told = json.dumps(model.requests()[1:])
    assert "Denied by the policy 'releases time out': nobody decided within 3 s, and its fallback is deny." in told
