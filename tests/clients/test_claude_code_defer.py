"""The real Claude Code CLI (2.1.331) deferring a tool call nobody on the team decided in time (issue 58).

`claude -p` with the hooks `register claude-code --hooks --approve Bash` writes: its approving PreToolUse waits for
the team; when nobody decides within HOOKBRIDGE_APPROVAL_TIMEOUT the server answers `defer`, and Claude Code
stops the run on that tool call (stop_reason `tool_deferred`). The approval stays on the dashboards; a person
decides later; `claude -p --resume` runs the same tool call again, whose hook finds that decision at once.
The model is testing/model_stand_in.py (one Bash command, then what it said), offline.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing.claude_cli import CLAUDE, MODEL, cli_env, scripted_model
from testing.host_hooks import pending_approval
from testing.live import LiveServer, serving

pytestmark = [
    pytest.mark.skipif(not CLAUDE.exists(), reason="the Claude Code CLI is not installed (make claude-code-deps)"),
    pytest.mark.timeout(300),
]

COMMAND = "echo made > hi.txt && cat hi.txt"


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving(HOOKBRIDGE_APPROVAL_TIMEOUT="5")


async def claude(project: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    """`claude -p … --output-format json` run to its end: its result."""
    process = await asyncio.create_subprocess_exec(
        str(CLAUDE), "-p", *args, "--model", MODEL, "--output-format", "json",
        cwd=project, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 180)
    text = out.decode(errors="replace")
    start = text.find("{")
    assert start >= 0, f"no result from claude ({process.returncode}): {text!r} {err.decode(errors='replace')!r}"
    found: dict[str, Any] = json.loads(text[start:])
    return found


async def test_a_run_nobody_decided_for_stops_and_its_resumed_run_gets_the_later_decision(
    server: LiveServer, tmp_path: Path
) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    token = server.tokens["agent-a"]
    server.manage(
        "register", "claude-code", "--hooks", "--approve", "Bash", "--project", str(project),
        "--url", server.url, "--token", token,
    )  # fmt: skip
    sid = str(uuid.uuid4())
    with scripted_model(COMMAND, tmp_path) as model:
        env = cli_env(model, tmp_path / "home", token)
        first = await claude(project, env, "make hi.txt", "--session-id", sid)
        assert first.get("stop_reason") == "tool_deferred", first
        assert not (project / "hi.txt").exists(), "deferred: nothing ran"
        approval = await pending_approval(server, COMMAND)
        assert approval["agentLeftReason"].startswith("deferred: "), "the card stays, saying the run stopped"
        assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
        resumed = await claude(project, env, "--resume", sid)
    assert (project / "hi.txt").read_text() == "made\n", resumed
    assert resumed.get("stop_reason") != "tool_deferred", resumed
