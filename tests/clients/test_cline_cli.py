"""The real Cline CLI (3.0.65, from npm) against a real daphne process, offline (issue 58).

Cline runs its openai-compatible provider against testing/openai_stand_in.py (a scripted Chat Completions API that
asks for one shell command), in `cline "<prompt>"` as scripts and people run it, with the hook files `register
cline` wrote into the project's .clinerules/hooks: its PreToolUse hook asks the team before the command runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from testing.claude_cli import Model, stand_in
from testing.host_hooks import pending_approval
from testing.live import ROOT, LiveServer, free_port, serving

CLINE = ROOT / "tests" / "cline_cli" / "node_modules" / ".bin" / "cline"
COMMAND = "echo made > hi.txt"

pytestmark = [
    pytest.mark.skipif(not CLINE.exists(), reason="the Cline CLI is not installed (make cline-deps)"),
    pytest.mark.timeout(300),
]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


@contextmanager
def cline_world(server: LiveServer, tmp_path: Path, url: str | None = None) -> Iterator[tuple[Path, dict[str, str]]]:
    """A project registered with Hook Bridge as `register cline --project` does, Cline's own settings pointed at
    the scripted model: (the project, the environment Cline runs in)."""
    model = Model(free_port(), tmp_path / "model-requests.jsonl")
    home, config, project = tmp_path / "home", tmp_path / "cline", tmp_path / "shop"
    for folder in (home, config, project):
        folder.mkdir()
    token = server.tokens["agent-a"]
    server.manage("register", "cline", "--project", str(project), "--url", url or server.url, "--token", token)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HOOKBRIDGE_", "CLINE_"))}
    env.update(HOME=str(home), HOOKBRIDGE_TOKEN=token, AI_SDK_LOG_WARNINGS="false")
    subprocess.run(
        [str(CLINE), "auth", "-p", "openai", "-k", "sk-offline", "-b", f"http://127.0.0.1:{model.port}/v1",
         "-m", "gpt-4o", "--config", str(config)],
        env=env, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    try:
        with stand_in("testing.openai_stand_in", model, COMMAND):
            yield project, {**env, "CLINE_TEST_CONFIG": str(config)}
    finally:
        stop_hub_daemons(project)


def stop_hub_daemons(project: Path) -> None:
    """Cline's CLI starts a hub daemon of its own for the folder (`--cline-hub-daemon --cwd FOLDER`), in a session
    of its own, that outlives it: found in the wild still running 84 minutes after a CI-like run had ended."""
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone meanwhile, or not a process
        if b"--cline-hub-daemon" in argv and str(project).encode() in argv:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)


async def run_cline(project: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        str(CLINE), "Make hi.txt", "--config", env["CLINE_TEST_CONFIG"], "-c", str(project),
        cwd=project, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip


async def finished(cli: asyncio.subprocess.Process) -> str:
    try:
        out, _ = await asyncio.wait_for(cli.communicate(), 180)
    finally:
        if cli.returncode is None:
            cli.kill()
            await cli.wait()
    return out.decode(errors="replace")


async def decided(server: LiveServer, tmp_path: Path, decision: dict[str, Any]) -> tuple[Path, str]:
    with cline_world(server, tmp_path) as (project, env):
        cli = await run_cline(project, env)
        try:
            approval = await pending_approval(server, COMMAND, timeout=120)
            assert approval["payload"]["host_title"] == "Cline"
            assert approval["payload"]["host_tool_name"] == "run_commands"
            assert approval["payload"]["cwd"] == str(project)
            assert not (project / "hi.txt").exists(), "held: nothing ran yet"
            assert (await server.answer_via_api(approval["id"], decision)).status_code == 200
        finally:
            said = await finished(cli)
    return project, said


async def test_cline_runs_the_command_only_once_the_team_allows_it(server: LiveServer, tmp_path: Path) -> None:
    project, said = await decided(server, tmp_path, {"behavior": "allow"})
    assert (project / "hi.txt").read_text() == "made\n", said


async def test_a_team_deny_stops_the_command(server: LiveServer, tmp_path: Path) -> None:
    project, said = await decided(server, tmp_path, {"behavior": "deny", "message": "Not in this folder"})
    assert not (project / "hi.txt").exists(), said


async def test_with_the_server_down_cline_runs_nothing(server: LiveServer, tmp_path: Path) -> None:
    # Cline's CLI approves every tool itself: a hook that could not ask anyone refuses, never a silent allow.
    with cline_world(server, tmp_path, f"http://127.0.0.1:{free_port()}") as (project, env):
        said = await finished(await run_cline(project, env))
    assert not (project / "hi.txt").exists(), said
