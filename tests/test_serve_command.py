"""manage.py serve: --port exactly, or the first free port from 8000 up."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx2
import pytest

from mcpapi.management.commands import serve
from tests.live import ROOT, LiveServer, free_port


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
    helper.manage("migrate", "--noinput", "-v0")
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
