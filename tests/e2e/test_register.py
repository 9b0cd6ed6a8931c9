"""serve --register and stdio --register: MAXSIM's auto-registration in ~/.claude.json, for the life of the server."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from testing.live import ROOT, LiveServer, free_port, login_page_once_up

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
    helper.migrate()
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
            httpx2.AsyncClient(headers=entry["headers"], timeout=60) as http,
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
from hosts import claude_code
os.replace = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
claude_code.register_entry(Path({str(home / ".claude.json")!r}), "/repo", "hookbridge", {{"type": "http", "url": "x"}})
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert result.returncode == -signal.SIGKILL
    assert (home / ".claude.json").read_text() == ORIGINAL
    leftovers = [p.name for p in home.iterdir() if p.name != ".claude.json"]
    assert all(name.startswith(".claude.json.") and name.endswith(".tmp") for name in leftovers), leftovers
    assert os.stat(home / ".claude.json").st_mode & 0o777 == 0o640


# --- stdio --register -------------------------------------------------------------------------------


def stdio_params(database: LiveServer, home: Path, project: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "manage.py"), "mcp_stdio", *args],
        env={**database.env, "HOME": str(home)},
        cwd=str(project),
    )


def registered_entry(home: Path, project: Path) -> dict[str, Any]:
    # A cold stdio process writes it as it starts: a minute, as testing.live.login_page_once_up waits.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        data = json.loads((home / ".claude.json").read_text())
        entry = data.get("projects", {}).get(str(project.resolve()), {}).get("mcpServers", {}).get("hookbridge")
        if entry is not None:
            return dict(entry)
        time.sleep(0.05)
    raise AssertionError("stdio --register wrote no entry")


def config_once_back(home: Path) -> str:
    """The file once it holds the original again (the server removes its entry as it ends), or as it is then."""
    deadline = time.monotonic() + 60
    while (text := (home / ".claude.json").read_text()) != ORIGINAL and time.monotonic() < deadline:
        time.sleep(0.05)
    return text


async def test_stdio_registers_a_working_entry_for_the_folder_and_removes_it_on_exit(
    database: LiveServer, home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    token = database.manage("create_token", "stdio-agent").strip().splitlines()[-1]
    params = stdio_params(database, home, project, "--register", "--token", token, "--toolsets", "askme")
    async with Client(stdio_client(params)) as client:
        assert "ask-one-question" in {tool.name for tool in (await client.list_tools()).tools}
        entry = registered_entry(home, project)
        assert entry["type"] == "stdio"
        assert entry["command"] == sys.executable
        assert entry["args"] == [str(ROOT / "manage.py"), "mcp_stdio", "--toolsets", "askme"]  # no --register
        # What decides where the data is goes with it (the test server's own data folder, as a person's would).
        assert entry["env"] == {
            "HOOKBRIDGE_DATA_DIR": database.env["HOOKBRIDGE_DATA_DIR"],
            "DATABASE_URL": database.env["DATABASE_URL"],
            "HOOKBRIDGE_TOKEN": token,
        }
        assert (home / ".claude.json").stat().st_mode & 0o777 == 0o640
        # Claude Code starts the entry with its own environment plus the entry's, in the project.
        base = {k: v for k, v in database.env.items() if k not in ("DATABASE_URL", "SECRET_KEY", "HOOKBRIDGE_DATA_DIR")}
        started = StdioServerParameters(
            command=entry["command"],
            args=entry["args"],
            env={**base, **entry["env"], "HOME": str(home)},
            cwd=str(project),
        )
        async with Client(stdio_client(started)) as second:
            assert "ask-one-question" in {tool.name for tool in (await second.list_tools()).tools}
        assert registered_entry(home, project) == entry  # the started one registers nothing of its own
    # The client closed stdin: the server ended and took exactly its entry away.
    assert config_once_back(home) == ORIGINAL
    assert (home / ".claude.json").stat().st_mode & 0o777 == 0o640


def test_stdio_removes_its_entry_on_sigterm(database: LiveServer, home: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    params = stdio_params(database, home, project, "--register")
    process = subprocess.Popen(
        [params.command, *params.args], cwd=params.cwd, env=params.env,
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        entry = registered_entry(home, project)
        assert "env" not in entry or "HOOKBRIDGE_TOKEN" not in entry["env"]  # no token: the OS user asks
    finally:
        process.send_signal(signal.SIGTERM)
        _, errors = process.communicate(timeout=20)
    assert (home / ".claude.json").read_text() == ORIGINAL, errors.decode()[-2000:]


async def test_registration_and_stdio_links_name_the_running_serves_port_not_8000(
    database: LiveServer, home: Path, tmp_path: Path
) -> None:
    """`serve` took a port other than 8000: every link and registration made beside it names that port."""
    project = tmp_path / "repo"
    project.mkdir()
    port = free_port()
    assert port != 8000
    process = subprocess.Popen(  # noqa: ASYNC220 - started once, before the test awaits anything
        [sys.executable, str(ROOT / "manage.py"), "serve", "--port", str(port), "--no-bootstrap"],
        cwd=project, env={**database.env, "HOME": str(home)}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    env = {**database.env, "HOME": str(home)}

    def register(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "register", "claude-code", "--project", str(project), *args],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return done.stdout

    def entry() -> dict[str, Any]:
        return dict(
            json.loads((home / ".claude.json").read_text())["projects"][str(project)]["mcpServers"]["hookbridge"]
        )

    try:
        page = login_page_once_up(port)
        assert page is not None
        assert page.status_code == 200
        register()
        first = entry()
        assert first["url"] == f"http://127.0.0.1:{port}/mcp"
        register()
        assert entry()["headers"] == first["headers"], "a re-run mints no new token"
        hooks = register("--hooks", "--settings-file", str(tmp_path / "settings.json"))
        assert f"http://127.0.0.1:{port}/hooks/claude" in (tmp_path / "settings.json").read_text()
        assert first["headers"]["Authorization"].removeprefix("Bearer ") in hooks, "the hooks reuse the same token"
        register("--url", "http://example.test:9000")
        assert entry()["url"] == "http://example.test:9000/mcp", "--url is the server's base URL"
        # stdio beside it: the pending text (and the progress messages) name the running serve's address.
        params = StdioServerParameters(
            command=sys.executable,
            args=[str(ROOT / "manage.py"), "mcp_stdio", "--no-open"],
            env={**env, "HOOKBRIDGE_MAX_HOLD": "1"},
            cwd=str(project),
        )
        said: list[str] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            said.append(message or "")

        with (tmp_path / "stdio.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                # Without a progress token the hold (1 s here) runs out and the text says where to answer.
                pending = await client.call_tool("ask_question", {"question": "Which port, no progress?"})
                waiting = asyncio.create_task(
                    client.call_tool("ask_question", {"question": "Which port?"}, progress_callback=on_progress)
                )
                for _ in range(100):
                    if said:
                        break
                    await asyncio.sleep(0.1)
                waiting.cancel()
        assert said, "no progress message came"
        assert f"http://127.0.0.1:{port}/questions/" in said[0]
        assert f"http://127.0.0.1:{port}/" in str(pending.content)
        assert ":8000" not in str(pending.content) + " ".join(said)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
