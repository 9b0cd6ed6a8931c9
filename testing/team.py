"""Team mode needs the machine's PostgreSQL and Redis.

Outside CI, tests marked `team` skip with a message naming what is unreachable.
In CI (CI=true) they fail instead: CI must run them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import pytest

from testing.live import LiveServer, free_port

POSTGRES_URL = os.environ.get("HOOKBRIDGE_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test")


def _redis_url() -> str:
    """The machine's Redis; under pytest-xdist, a database of each worker's own (1, 2, …).

    Channel groups are named by row ids, which every test's new database repeats: two team tests on one
    database at once would hear each other's pushes and revocations.
    """
    configured = os.environ.get("HOOKBRIDGE_TEST_REDIS_URL")
    if configured:
        return configured
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    index = int(worker[2:]) + 1 if worker.startswith("gw") and worker[2:].isdigit() else 0
    return f"redis://127.0.0.1:6379/{index % 16}"


REDIS_URL = _redis_url()


def reachable(url: str, default_port: int) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or default_port), timeout=2):
            return True
    except OSError:
        return False


def require_team_services() -> None:
    missing = [
        name
        for name, url, port in (("PostgreSQL", POSTGRES_URL, 5432), ("Redis", REDIS_URL, 6379))
        if not reachable(url, port)
    ]
    if missing:
        message = f"team-mode tests need {' and '.join(missing)} ({POSTGRES_URL}, {REDIS_URL})"
        if os.environ.get("CI"):
            pytest.fail(message + ": unreachable in CI, where these tests must run")
        pytest.skip(message + ": unreachable here")


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A new, empty database on the team PostgreSQL; dropped afterwards."""
    import psycopg

    name = f"hookbridge_e2e_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(POSTGRES_URL)
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def two_workers(**env: str) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Two daphne workers on a fresh PostgreSQL database and the team Redis, sharing tokens and a user."""
    require_team_services()
    with fresh_postgres_database() as database:
        shared = {"DATABASE_URL": database, "REDIS_URL": REDIS_URL, **env}
        first = LiveServer(env_overrides=shared)
        first.setup()
        second = LiveServer(env_overrides=shared, prepare=False, tokens=first.tokens)
        try:
            second.setup()
            yield first, second
        finally:
            second.close()
            first.close()


class OwnRedis:
    """A redis-server of its own on a free port, which a test or a soak may stop and start again."""

    def __init__(self) -> None:

        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is not installed"
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            probe = subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True, text=True)
            if probe.stdout.strip() == "PONG":
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
