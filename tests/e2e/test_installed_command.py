"""The `hookbridge` command from a wheel, installed in a clean virtualenv outside the checkout (issue 16)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from hookbridge_site import cli
from testing.live import ROOT, free_port, login_page_once_up, untraced

pytestmark = [pytest.mark.timeout(600)]


def test_an_unknown_command_lists_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["frobnicate"]) == 2
    error = capsys.readouterr().err
    assert "unknown command 'frobnicate'" in error
    for name in ("serve", "stdio", "token", "register", "unregister", "questions", "hooks", "purge", "migrate"):
        assert name in error


def test_help_says_what_hook_bridge_is_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Hook Bridge: AI coding agents ask your team over MCP")
    for name in cli.COMMANDS:
        assert name in out


def test_it_says_its_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("hookbridge 0.")


def test_no_command_is_a_usage_error_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    said = capsys.readouterr()
    assert said.out == ""
    assert "usage: hookbridge <command>" in said.err


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of this checkout, installed into a fresh virtualenv in a folder of its own."""
    place = tmp_path_factory.mktemp("installed")
    source = place / "source"
    # Build from a copy of the tracked files: nothing in the checkout (var/, .venv) can leak in.
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    # Untraced: the build would measure the copy, and the report would count every file of it as not run
    # (CI's coverage fell to 48%).
    building = untraced(os.environ)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(place / "dist"), str(source)],
        check=True, capture_output=True, timeout=300, env=building,
    )  # fmt: skip
    wheel = next((place / "dist").glob("hookbridge-*.whl"))
    venv = place / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    # --no-compile: pip's compiling of every module it installs was a third of the install (8 of 22 s), and
    # Python compiles what the command imports as it runs.
    install = [str(venv / "bin" / "pip"), "install", "-q", "--no-compile", str(wheel)]
    subprocess.run(install, check=True, capture_output=True, timeout=400)
    return venv / "bin" / "hookbridge"


def environment(tmp: Path) -> dict[str, str]:
    keep = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HOOKBRIDGE_", "DATABASE_URL", "COVERAGE_", "DJANGO_"))
    }
    return {**keep, "XDG_DATA_HOME": str(tmp / "data"), "HOME": str(tmp / "home"), "HOOKBRIDGE_OPEN_BROWSER": "0"}


def test_the_installed_command_serves_the_dashboard_with_its_data_in_the_users_folder(
    installed: Path, tmp_path: Path
) -> None:
    env = environment(tmp_path)
    (tmp_path / "home").mkdir()
    port = free_port()
    server = subprocess.Popen(
        [str(installed), "serve", "--port", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # A cold install's first start on a loaded, slow machine took over a minute (2026-12-01): a bound, not a timing.
        page = login_page_once_up(port, timeout=180)
        assert page is not None, "the installed server did not answer"
        assert page.status_code == 200
        assert "/static/" in page.text
        stylesheet = page.text.split('href="/static/', 1)[1].split('"', 1)[0]
        static = httpx2.get(f"http://127.0.0.1:{port}/static/{stylesheet}")
        assert static.status_code == 200
        assert len(static.content) > 100
        # The installable app's parts come from the wheel too: a template that is not a page, and PNG icons.
        worker = httpx2.get(f"http://127.0.0.1:{port}/sw.js")
        assert worker.status_code == 200
        assert "caches.match(OFFLINE)" in worker.text
        icon = httpx2.get(f"http://127.0.0.1:{port}/static/icon-512.png")
        assert (icon.status_code, icon.content[:4]) == (200, b"\x89PNG")
    finally:
        server.terminate()
        server.communicate(timeout=20)
    data = tmp_path / "data" / "hookbridge"
    assert (data / "hookbridge.sqlite3").is_file()
    assert (data / "secret_key").is_file()
    assert (data / "local-credentials.json").is_file()
    site_packages = next((installed.parent.parent / "lib").glob("python3*/site-packages"))
    assert not list(site_packages.rglob("*.sqlite3")), "no data inside site-packages"
    assert not list(site_packages.rglob("local-credentials.json"))


def test_the_installed_stdio_answers_tools_list(installed: Path, tmp_path: Path) -> None:
    env = environment(tmp_path)
    subprocess.run([str(installed), "migrate", "-v0"], env=env, cwd=tmp_path, check=True, timeout=120)
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]  # fmt: skip
    # As a host does: stdin stays open until the reply came (an EOF would end the session first).
    process = subprocess.Popen(
        [str(installed), "stdio", "--toolsets", "maxsim+askme"],
        env=env, cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
    process.stdin.flush()
    listed = None
    try:
        for line in process.stdout:
            reply = json.loads(line)
            if reply.get("id") == 2:
                listed = reply
                break
    finally:
        _, errors = process.communicate(timeout=60)  # closes stdin: the end of the session
    assert listed is not None, errors[-3000:]
    names = {tool["name"] for tool in listed["result"]["tools"]}
    assert {"ask_question", "ask-one-question"} <= names
