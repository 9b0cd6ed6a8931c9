"""The servers a benchmark runs against, and the clients that drive them.

Embedded: one daphne worker on SQLite and the in-memory layer, as `make serve`
runs it. Team: two workers on a fresh PostgreSQL database and Redis, with the
agents on one worker and the person answering on the other.
"""

from __future__ import annotations

import os
import resource
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from testing.live import ROOT, LiveServer, sqlite_at
from testing.team import REDIS_URL, fresh_postgres_database, require_team_services

# Calls a worker may hold: every held call is an open connection on both ends.
OPEN_FILES = 16_384

BENCH_ENV = {
    "HOOKBRIDGE_QUESTIONS_PER_MINUTE": "0",  # agents here ask far more than a person's agents would
    "HOOKBRIDGE_REQUESTS_PER_MINUTE": "0",  # (bench.fairness turns these two on, to measure them)
    "HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN": "100000",  # one token opens hundreds of calls at once here
    "HOOKBRIDGE_MAX_HOLD": "900",  # held calls stay held for the whole run
    "HOOKBRIDGE_PROGRESS_INTERVAL": "30",
    "HOOKBRIDGE_WAIT_SLICE": "2",
    "LOG_LEVEL": "WARNING",
    "DJANGO_SETTINGS_MODULE": "hookbridge_site.settings",  # what people run, not the tests' quick hasher
}


def raise_open_files_limit() -> int:
    """Raise this process's (and so its children's) open-files limit as far as allowed."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = OPEN_FILES if hard == resource.RLIM_INFINITY else min(OPEN_FILES, hard)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


@dataclass
class Setup:
    """Where agents call (agent_side) and where the person answers (answer_side)."""

    mode: str
    agent_side: LiveServer
    answer_side: LiveServer
    database_url: str

    @property
    def workers(self) -> list[LiveServer]:
        return [self.agent_side] if self.agent_side is self.answer_side else [self.agent_side, self.answer_side]

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Rows from the workers' database, read directly (%s placeholders, either database)."""
        if self.database_url.startswith("sqlite"):
            with sqlite_at(self.database_url.removeprefix("sqlite:///")) as db:
                return db.execute(sql.replace("%s", "?"), params).fetchall()
        import psycopg

        with psycopg.connect(self.database_url.replace("postgres://", "postgresql://", 1)) as db:
            return db.execute(sql, params).fetchall()

    def execute(self, sql: str, *params: Any) -> None:
        """A write to the workers' database, committed (%s placeholders, either database)."""
        if self.database_url.startswith("sqlite"):
            with sqlite_at(self.database_url.removeprefix("sqlite:///")) as db:
                db.execute(sql.replace("%s", "?"), params)
            return
        import psycopg

        with psycopg.connect(self.database_url.replace("postgres://", "postgresql://", 1)) as db:
            db.execute(sql, params)

    def forget_pending(self, prefix: str) -> None:
        """Take a finished run's questions off the queue (hung-up calls stay answerable a while, as they should)."""
        self.execute(
            "UPDATE questions_question SET status='cancelled', cancel_reason='agent_gone' "
            "WHERE status='pending' AND text LIKE %s",
            prefix + "%",
        )

    def count_pending(self) -> int:
        """Pending questions a call still waits on (a hung-up agent's stay pending, marked as left)."""
        query = "SELECT count(*) FROM questions_question WHERE status='pending' AND agent_left_at IS NULL"
        return int(self.query(query)[0][0])


@contextmanager
def embedded(root: Path = ROOT, **env: str) -> Iterator[Setup]:
    """Hook Bridge embedded, from this checkout or another (`root`: a baseline's worktree)."""
    server = LiveServer(env_overrides={**BENCH_ENV, **env}, root=root)
    server.setup()
    try:
        yield Setup("embedded", server, server, server.env["DATABASE_URL"])
    finally:
        server.close()


@contextmanager
def team(redis_url: str = REDIS_URL, **env: str) -> Iterator[Setup]:
    require_team_services()
    with fresh_postgres_database(migrated=True) as database_url:
        shared = {**BENCH_ENV, "DATABASE_URL": database_url, "REDIS_URL": redis_url, **env}
        first = LiveServer(env_overrides=shared)
        first.setup()
        second = LiveServer(env_overrides=shared, prepare=False, tokens=first.tokens)
        try:
            second.setup()
            yield Setup("team", first, second, database_url)
        finally:
            second.close()
            first.close()


SETUPS: dict[str, Callable[[], AbstractContextManager[Setup]]] = {"embedded": embedded, "team": team}


def rss_bytes(server: LiveServer) -> int:
    assert server.process is not None
    return rss_of(server.process.pid)


def rss_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def http_client(server: LiveServer, token_name: str = "agent-a", **kwargs: Any) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(
        headers=server.auth(token_name),
        timeout=httpx2.Timeout(30, read=900),
        limits=httpx2.Limits(max_connections=None, max_keepalive_connections=None),
        **kwargs,
    )


@asynccontextmanager
async def agent(server: LiveServer, token_name: str = "agent-a", path: str = "/mcp") -> AsyncIterator[Client]:
    """One agent: an MCP client in the 2026-07-28 era (no handshake), able to make many calls at once."""
    http = http_client(server, token_name)
    async with http, Client(streamable_http_client(f"{server.url}{path}", http_client=http), mode="2026-07-28") as c:
        yield c


def environment() -> dict[str, Any]:
    import platform

    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
    }
