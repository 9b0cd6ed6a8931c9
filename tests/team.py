"""Team mode needs the machine's PostgreSQL and Redis.

Outside CI, tests marked `team` skip with a message naming what is unreachable.
In CI (CI=true) they fail instead: CI must run them.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import pytest

POSTGRES_URL = os.environ.get("HOOKBRIDGE_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("HOOKBRIDGE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def _reachable(url: str, default_port: int) -> bool:
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
        if not _reachable(url, port)
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
