"""serve --register: MAXSIM's auto-registration in ~/.claude.json, for the life of the server (issue 16)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live import ROOT, LiveServer, free_port, login_page_once_up

pytestmark = [pytest.mark.e2e]

# As Claude Code writes it (JSON.stringify with 2 spaces, no final newline), with other projects and keys.
ORIGINAL = json.dumps(
    {
        "numStartups": 41,
        "theme": "dark",
        "projects": {
            "/home/dana/other": {"mcpServers": {"other": {"type": "stdio", "command": "npx", "args": ["x"]}}},
            "/home/dana/naïve café": {"allowedTools": ["Bash(git:*)"], "history": []},
        },
        "tipsHistory": {"memory": 3},
    },
    indent=2,
    ensure_ascii=False,
)


@pytest.fixture(scope="module")
def database() -> Iterator[LiveServer]:
    helper = LiveServer()
    helper.manage("migrate", "--noinput", "-v0")
    yield helper
    helper.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / ".claude.json").write_text(ORIGINAL)
    (tmp_path / ".claude.json").chmod(0o640)
    return tmp_path


def start_serve(database: LiveServer, home: Path, project: Path, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "serve", "--port", str(port), "--no-bootstrap", "--register"],
        cwd=project, env={**database.env, "HOME": str(home)}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    page = login_page_once_up(port)
    if page is not None and page.status_code == 200:
        return process
    process.kill()
    raise AssertionError("serve did not start")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_serve_registers_its_own_port_and_removes_exactly_its_entry(
    database: LiveServer, home: Path, tmp_path: Path, stop: signal.Signals
) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    port = free_port()
    process = start_serve(database, home, project, port)
    try:
        data = json.loads((home / ".claude.json").read_text())
        entry = data["projects"][str(project.resolve())]["mcpServers"]["hookbridge"]
        assert entry["url"] == f"http://127.0.0.1:{port}/mcp"
        assert entry["type"] == "http"
        assert data["projects"]["/home/dana/other"] == json.loads(ORIGINAL)["projects"]["/home/dana/other"]
        assert (home / ".claude.json").stat().st_mode & 0o777 == 0o640
        # The entry works as Claude Code would use it.
        async with (
            httpx2.AsyncClient(headers=entry["headers"]) as http,
            Client(streamable_http_client(entry["url"], http_client=http), mode="legacy") as client,
        ):
            assert "ask_question" in {tool.name for tool in (await client.list_tools()).tools}
    finally:
        process.send_signal(stop)
        _, errors = process.communicate(timeout=20)
    assert process.returncode is not None
    assert (home / ".claude.json").read_text() == ORIGINAL, errors.decode()[-2000:]
    assert (home / ".claude.json").stat().st_mode & 0o777 == 0o640


async def test_a_change_claude_code_made_meanwhile_is_kept(database: LiveServer, home: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    process = start_serve(database, home, project, free_port())
    try:
        data = json.loads((home / ".claude.json").read_text())
        data["numStartups"] = 42  # Claude Code saved the file while the server ran
        (home / ".claude.json").write_text(json.dumps(data, indent=2, ensure_ascii=False))
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
    expected = json.loads(ORIGINAL) | {"numStartups": 42}
    assert (home / ".claude.json").read_text() == json.dumps(expected, indent=2, ensure_ascii=False)


def test_a_crash_between_write_and_rename_leaves_the_file_whole(home: Path) -> None:
    """The process dies (SIGKILL) after writing the temporary file and before renaming it."""
    script = f"""
import os, signal, sys
sys.path.insert(0, {str(ROOT)!r})
from pathlib import Path
from mcpapi import claude_config
os.replace = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
claude_config.register(Path({str(home / ".claude.json")!r}), "/repo", "hookbridge", {{"type": "http", "url": "x"}})
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert result.returncode == -signal.SIGKILL
    assert (home / ".claude.json").read_text() == ORIGINAL
    leftovers = [p.name for p in home.iterdir() if p.name != ".claude.json"]
    assert all(name.startswith(".claude.json.") and name.endswith(".tmp") for name in leftovers), leftovers
    assert os.stat(home / ".claude.json").st_mode & 0o777 == 0o640
