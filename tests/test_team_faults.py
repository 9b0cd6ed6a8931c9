"""Faults in team mode, each injected while agents wait; no answer may be lost.

Needs PostgreSQL on 127.0.0.1:5432 and the redis-server binary (see tests/team.py).
These tests start their own Redis on a free port, so restarting it disturbs nothing else.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.live import LiveServer, free_port
from tests.team import fresh_postgres_database, require_team_services

pytestmark = [pytest.mark.e2e, pytest.mark.team]


class OwnRedis:
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


@pytest.fixture
def redis() -> Iterator[OwnRedis]:
    require_team_services()
    if not shutil.which("redis-server"):
        pytest.fail("redis-server is not installed")
    own = OwnRedis()
    own.start()
    yield own
    own.stop()


@pytest.fixture
def worker(redis: OwnRedis) -> Iterator[LiveServer]:
    with fresh_postgres_database() as database_url:
        server = LiveServer(
            env_overrides={"DATABASE_URL": database_url, "REDIS_URL": redis.url, "HOOKBRIDGE_MAX_HOLD": "120"}
        )
        try:
            server.setup()
            yield server
        finally:
            server.close()


async def test_answers_reach_waiting_agents_across_a_redis_restart(worker: LiveServer, redis: OwnRedis) -> None:
    async with worker.mcp("legacy") as client:
        before = asyncio.create_task(client.call_tool("ask_question", {"question": "Asked before Redis went down?"}))
        question = await worker.wait_for_question("Asked before Redis went down?")

        await asyncio.to_thread(redis.stop)
        during = asyncio.create_task(client.call_tool("ask_question", {"question": "Asked while Redis is down?"}))
        asked_during = await worker.wait_for_question("Asked while Redis is down?")
        assert (await worker.answer_via_api(question["id"], "answered while Redis was down")).status_code == 200
        assert (await asyncio.wait_for(before, 15)).structured_content == {"answer": "answered while Redis was down"}

        await asyncio.to_thread(redis.start)
        assert (await worker.answer_via_api(asked_during["id"], "answered after the restart")).status_code == 200
        assert (await asyncio.wait_for(during, 15)).structured_content == {"answer": "answered after the restart"}

        after = asyncio.create_task(client.call_tool("ask_question", {"question": "Asked after the restart?"}))
        asked_after = await worker.wait_for_question("Asked after the restart?")
        assert (await worker.answer_via_api(asked_after["id"], "all good")).status_code == 200
        assert (await asyncio.wait_for(after, 15)).structured_content == {"answer": "all good"}
