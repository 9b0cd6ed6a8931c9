"""Team mode needs the machine's PostgreSQL and Redis.

Outside CI, tests marked `team` skip with a message naming what is unreachable.
In CI (CI=true) they fail instead: CI must run them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import pytest

from testing.live import ROOT, LiveServer, free_port, migrations_digest, untraced

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


def _database_url(name: str) -> str:
    return urlunsplit(urlsplit(POSTGRES_URL)._replace(path=f"/{name}"))


def migrated_template() -> str:
    """A PostgreSQL database migrated once per set of migrations, for new databases to be copied from.

    Migrating a new database took some ten seconds of CPU (with coverage) for every pair of team workers;
    `CREATE DATABASE … TEMPLATE` copies one in a fraction of that. Built under a name of its own and
    renamed into place, so two test workers building it at once keep one whole template.
    """
    import psycopg

    name = f"hookbridge_tpl_{migrations_digest(ROOT)}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return name
        building = f"{name}_{uuid.uuid4().hex[:8]}"
        admin.execute(f'CREATE DATABASE "{building}"')
    env = untraced(os.environ)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"],
        cwd=ROOT, env={**env, "DATABASE_URL": _database_url(building)}, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        try:
            admin.execute(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
        except psycopg.errors.DuplicateDatabase:  # another worker's, made first, is kept
            admin.execute(f'DROP DATABASE IF EXISTS "{building}" WITH (FORCE)')
    return name


@contextmanager
def fresh_postgres_database(*, migrated: bool = False) -> Iterator[str]:
    """A new database on the team PostgreSQL, empty or (`migrated`) a copy of the migrated template; dropped
    afterwards."""
    import psycopg

    name = f"hookbridge_e2e_{uuid.uuid4().hex[:10]}"
    template = f' TEMPLATE "{migrated_template()}"' if migrated else ""
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"{template}')
    try:
        yield _database_url(name)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def two_workers(**env: str) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Two daphne workers on a fresh PostgreSQL database and the team Redis, sharing tokens and a user."""
    require_team_services()
    with fresh_postgres_database(migrated=True) as database:
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
        deadline = time.monotonic() + 30
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
