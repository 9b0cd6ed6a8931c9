"""Faults in team mode, each injected while agents wait; no answer may be lost.

Needs PostgreSQL on 127.0.0.1:5432 and the redis-server binary (see testing/team.py).
These tests start their own Redis on a free port, so restarting it disturbs nothing else.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Iterator

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from testing.live import LiveServer, free_port
from testing.team import OwnRedis, fresh_postgres_database, require_team_services


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
    with fresh_postgres_database(migrated=True) as database_url:
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
        assert (await asyncio.wait_for(before, 30)).structured_content == {"answer": "answered while Redis was down"}

        await asyncio.to_thread(redis.start)
        assert (await worker.answer_via_api(asked_during["id"], "answered after the restart")).status_code == 200
        assert (await asyncio.wait_for(during, 30)).structured_content == {"answer": "answered after the restart"}

        after = asyncio.create_task(client.call_tool("ask_question", {"question": "Asked after the restart?"}))
        asked_after = await worker.wait_for_question("Asked after the restart?")
        assert (await worker.answer_via_api(asked_after["id"], "all good")).status_code == 200
        assert (await asyncio.wait_for(after, 30)).structured_content == {"answer": "all good"}


class CuttableProxy:
    """A TCP proxy to PostgreSQL in a thread of its own; cut() makes the database unreachable."""

    def __init__(self, target_port: int = 5432) -> None:
        self.port = free_port()
        self.target_port = target_port
        self.loop = asyncio.new_event_loop()
        self.server: asyncio.base_events.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _handle(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.writers |= {client_writer, server_writer}
        await asyncio.gather(self._pipe(client_reader, server_writer), self._pipe(server_reader, client_writer))

    def start(self) -> None:
        self.thread.start()
        self.server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handle, "127.0.0.1", self.port), self.loop
        ).result(5)

    def cut(self) -> None:
        async def close() -> None:
            assert self.server is not None
            self.server.close()
            for writer in self.writers:
                writer.close()

        asyncio.run_coroutine_threadsafe(close(), self.loop).result(5)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)


async def test_an_unreachable_database_gets_a_clear_error_not_a_hang() -> None:
    require_team_services()
    proxy = CuttableProxy()
    proxy.start()
    try:
        with fresh_postgres_database(migrated=True) as database_url:
            through_proxy = database_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
            server = LiveServer(env_overrides={"DATABASE_URL": through_proxy})
            try:
                server.setup()
                async with server.mcp("legacy") as client:
                    assert (await client.call_tool("get_phase_status", {})).structured_content is not None
                    await asyncio.to_thread(proxy.cut)
                    # Refused with the reason, not left hanging: a "did not hang" bound of tens of seconds.
                    with pytest.raises(MCPError) as failure:
                        await asyncio.wait_for(client.call_tool("ask_question", {"question": "Anyone there?"}), 40)
                assert "cannot reach its database" in str(failure.value)

                # A token this worker has not checked yet needs the database at the door.
                async with httpx2.AsyncClient(
                    headers={**server.auth("agent-b"), "Accept": "application/json, text/event-stream"}, timeout=15
                ) as http:
                    response = await http.post(f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
                assert response.status_code == 503
                assert "cannot reach its database" in response.json()["error"]["message"]
            finally:
                server.close()
    finally:
        proxy.stop()
