"""manage.py serve: --port exactly, or the first free port from 8000 up."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx2
import pytest

from mcpapi.management.commands import serve
from testing.live import ROOT, LiveServer, free_port


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


def test_auto_discovery_skips_a_taken_port(taken_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serve, "FIRST_PORT", taken_port)
    monkeypatch.setattr(serve, "LAST_PORT", taken_port + 50)
    chosen = serve.choose_port("127.0.0.1", None)
    assert chosen > taken_port
    assert serve.port_is_free("127.0.0.1", chosen)


def test_a_taken_port_fails_with_a_message_naming_it(taken_port: int) -> None:
    helper = LiveServer()
    try:
        result = subprocess.run(
            [sys.executable, "manage.py", "serve", "--port", str(taken_port), "--no-bootstrap"],
            cwd=ROOT, env=helper.env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    finally:
        helper.close()
    assert result.returncode != 0
    assert f"port {taken_port} is already taken" in result.stderr


def test_it_serves_on_the_port_it_prints() -> None:
    helper = LiveServer()
    helper.migrate()
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--no-bootstrap"],
        cwd=ROOT, env=helper.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == f"Hook Bridge is listening on http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                assert httpx2.get(f"http://127.0.0.1:{port}/accounts/login/").status_code == 200
                break
            except httpx2.HTTPError:
                time.sleep(0.2)
        else:
            pytest.fail("the server did not answer")
    finally:
        process.terminate()
        process.wait(15)
        helper.close()


def serve_and_read(*extra: str, newcomer: bool = False) -> tuple[list[str], str]:
    """Start `serve` with its first-run set-up, make two requests, stop it: (stdout's lines, stderr).

    `newcomer`: as on a fresh machine, with no secret key given (serve makes and saves one)."""
    helper = LiveServer()
    port = free_port()
    env = {key: value for key, value in helper.env.items() if not (newcomer and key == "SECRET_KEY")}
    process = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), *extra],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        lines: list[str] = []
        while not lines or not lines[-1].startswith("Hook Bridge is listening on"):
            line = process.stdout.readline()
            assert line, f"serve stopped before it listened: {lines}"
            lines.append(line.rstrip("\n"))
        for path in ("/mcp", "/accounts/login/", "/favicon.ico"):
            httpx2.get(f"http://127.0.0.1:{port}{path}")
    finally:
        process.terminate()
        rest, err = process.communicate(timeout=20)
        helper.close()
    return lines + rest.splitlines(), err


def test_the_banner_comes_last_and_requests_are_not_logged_unless_asked() -> None:
    out, err = serve_and_read(newcomer=True)
    # What it does, in its own lines (issue 55, point 14): how many migrations, how far, when done.
    total = int(re.fullmatch(r"Preparing the database: (\d+) migrations to apply…", out[0])[1])  # type: ignore[index]
    assert total > 10
    assert any(re.fullmatch(rf"  \d+ of {total} applied…", line) for line in out[1:4]), out[:5]
    assert any(re.fullmatch(rf"The database is ready: {total} migrations applied in [\d.]+ s\.", line) for line in out)
    # The first run saves a secret key: nothing of that reaches the terminal (it came with a timestamp, between
    # the command's own lines).
    assert "secret key" not in err.lower(), err
    said = "\n".join(out)
    assert "  Log in as: admin / " in said
    assert "claude mcp add --transport http hookbridge http://127.0.0.1:" in said
    listening = next(n for n, line in enumerate(out) if line.startswith("Hook Bridge is listening on"))
    assert all(not line.strip() for line in out[listening + 1 :]), f"nothing after the banner: {out[listening:]}"
    assert '"GET /accounts/login/"' not in said
    assert "HTTP/2" not in err
    # The banner and nothing else (issue 39): no INFO line, and no 404 warning for the browser's icon.
    assert " INFO " not in err, err
    assert "Not Found" not in err, err


def test_the_access_log_is_one_flag_away() -> None:
    out, _ = serve_and_read("--access-log", "--no-bootstrap")
    assert any('"GET /accounts/login/" 200' in line for line in out), out
