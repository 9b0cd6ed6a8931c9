"""SIGTERM with calls blocked: the worker exits promptly and the question survives for the re-ask.

The Redis variant needs Redis on 127.0.0.1:6379 (see tests/team.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import pytest

from tests.live import LiveServer
from tests.team import REDIS_URL, require_team_services

pytestmark = [pytest.mark.e2e]


@pytest.fixture(params=["in-memory layer", pytest.param("redis layer", marks=pytest.mark.team)])
def worker(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    env = {"HOOKBRIDGE_MAX_HOLD": "120"}
    if request.param == "redis layer":
        require_team_services()
        env["REDIS_URL"] = REDIS_URL
    server = LiveServer(env_overrides=env)
    server.setup()
    yield server
    server.close()


async def test_sigterm_with_a_blocked_call_exits_promptly_and_the_re_ask_gets_the_answer(
    worker: LiveServer,
) -> None:
    text = "Will you survive a restart?"

    async def agent_that_loses_its_server() -> None:
        async with worker.mcp("2026-07-28") as client:
            await client.call_tool("ask_question", {"question": text})

    agent = asyncio.create_task(agent_that_loses_its_server())
    question = await worker.wait_for_question(text)
    took = await asyncio.to_thread(worker.stop)
    assert took < 8, f"daphne took {took:.1f}s to exit on SIGTERM"
    with contextlib.suppress(BaseException):  # the agent's connection is cut: expected
        await asyncio.wait_for(agent, 10)

    worker.start()  # same port, same database
    survivor = await worker.wait_for_question(text)
    assert survivor["id"] == question["id"]
    assert survivor["status"] == "pending"
    assert survivor["agentWaiting"] is False, worker.log()
    assert survivor["agentLeftReason"] == "the server restarted"

    async with worker.mcp("legacy") as client:
        again = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        await asyncio.sleep(0.5)
        assert (await worker.answer_via_api(question["id"], "yes, restarted")).status_code == 200
        result = await asyncio.wait_for(again, 10)
    assert result.structured_content == {"answer": "yes, restarted"}
    assert [q["id"] for q in await worker.questions() if q["question"] == text] == [question["id"]]
