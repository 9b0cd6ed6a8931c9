"""Team mode: two daphne workers sharing the real PostgreSQL and Redis.

Needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379 (see testing/team.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from testing.live import LiveServer, receive_until
from testing.team import two_workers

CACHED_FOR = 60


@pytest.fixture(scope="module")
def workers() -> Iterator[tuple[LiveServer, LiveServer]]:
    # A long slice: an answer that arrives fast came through Redis, not the re-read. Likewise a token's: its cached
    # row is trusted for a minute here (HOOKBRIDGE_ACCESS_CHECK_SECONDS), so a fast refusal was heard through Redis.
    with two_workers(
        HOOKBRIDGE_MAX_HOLD="120", HOOKBRIDGE_WAIT_SLICE="30", HOOKBRIDGE_ACCESS_CHECK_SECONDS=str(CACHED_FOR)
    ) as both:
        yield both


async def test_an_agent_on_one_worker_gets_the_answer_posted_to_the_other(
    workers: tuple[LiveServer, LiveServer],
) -> None:
    worker_a, worker_b = workers
    text = "Asked on A, answered on B?"
    async with worker_a.mcp("2026-07-28") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await worker_b.wait_for_question(text)
        response = await worker_b.answer_via_api(question["id"], "from worker B")
        assert response.status_code == 200
        result = await asyncio.wait_for(call, 20)  # inside the 30 s slice: woken through Redis
    assert result.structured_content == {"answer": "from worker B"}


async def test_a_dashboard_on_one_worker_sees_questions_and_events_from_the_other(
    workers: tuple[LiveServer, LiveServer],
) -> None:
    worker_a, worker_b = workers
    text = "Do you see me on B?"
    async with worker_b.login() as browser, worker_b.dashboard_socket(browser) as dashboard:
        await receive_until(dashboard, 'id="question-list"')
        async with worker_a.mcp("legacy") as client:
            call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
            await receive_until(dashboard, text)
            await client.call_tool("submit_lifecycle_event", {"event_type": "verification-started", "phase_name": "QA"})
            # The bar redrawn for the ask may come first (on a loaded machine, after the event's call returns).
            bar = await receive_until(dashboard, "Verification started")
            assert 'id="status-bar"' in bar
            assert "QA" in bar
            question = await worker_a.wait_for_question(text)
            await worker_a.answer_via_api(question["id"], "seen")
            await receive_until(dashboard, f'id="resolution-{question["id"]}" class="resolution outcome-')
            assert (await asyncio.wait_for(call, 30)).structured_content == {"answer": "seen"}


async def test_two_answers_on_two_workers_have_one_winner(workers: tuple[LiveServer, LiveServer]) -> None:
    worker_a, worker_b = workers
    text = "Race across workers?"
    async with worker_a.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await worker_a.wait_for_question(text)
        responses = await asyncio.gather(
            worker_a.answer_via_api(question["id"], "from A", token_name="answer-bot"),
            worker_b.answer_via_api(question["id"], "from B", token_name="answer-bot-2"),
        )
        result = await asyncio.wait_for(call, 30)
    assert sorted(r.status_code for r in responses) == [200, 409]
    winner = next(r for r in responses if r.status_code == 200).json()["answer"]["text"]
    loser = next(r for r in responses if r.status_code == 409).json()
    assert result.structured_content == {"answer": winner}
    assert loser["error"].startswith(f"Question {question['id']} was already answered by")


class CancelsToTheOtherWorker(httpx2.AsyncBaseTransport):
    """A load balancer's view: the call went to one worker, the client's cancel lands on the other."""

    def __init__(self, other_port: int) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._other_port = other_port
        self.rerouted = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST" and b"notifications/cancelled" in await request.aread():
            request.url = request.url.copy_with(port=self._other_port)
            self.rerouted += 1
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_a_cancel_on_the_other_worker_reaches_only_its_own_connections_call(
    workers: tuple[LiveServer, LiveServer],
) -> None:
    """Two clients on one token number their requests alike; the cancel, verified on worker B, names one call."""
    worker_a, worker_b = workers
    balancer = CancelsToTheOtherWorker(worker_b.port)
    timeout = httpx2.Timeout(30, read=120)
    async with (
        worker_b.login() as browser,
        worker_b.dashboard_socket(browser) as dashboard,
        httpx2.AsyncClient(headers=worker_a.auth(), timeout=timeout, transport=balancer) as one_http,
        httpx2.AsyncClient(headers=worker_a.auth(), timeout=timeout) as two_http,
        Client(streamable_http_client(f"{worker_a.url}/mcp", http_client=one_http), mode="legacy") as one,
        Client(streamable_http_client(f"{worker_a.url}/mcp", http_client=two_http), mode="legacy") as two,
    ):
        await receive_until(dashboard, 'id="question-list"')
        cancelled = asyncio.create_task(one.call_tool("ask_question", {"question": "Team: cancel mine?"}))
        kept = asyncio.create_task(two.call_tool("ask_question", {"question": "Team: keep mine?"}))
        gone = await worker_b.wait_for_question("Team: cancel mine?")
        question = await worker_b.wait_for_question("Team: keep mine?")
        cancelled.cancel()  # the SDK sends notifications/cancelled ("caller cancelled")
        await receive_until(dashboard, f'id="resolution-{gone["id"]}" class="resolution outcome-', timeout=30)
        assert balancer.rerouted == 1
        await asyncio.sleep(1)
        assert not kept.done()
        assert (await worker_b.answer_via_api(question["id"], "kept across workers")).status_code == 200
        assert (await asyncio.wait_for(kept, 30)).structured_content == {"answer": "kept across workers"}
    stored = await worker_a.wait_for_question("Team: cancel mine?", status="cancelled")
    assert stored["cancelReason"] == "client_cancelled"
    assert stored["agentLeftReason"].endswith("caller cancelled")


async def test_a_token_revoked_anywhere_is_refused_by_every_worker_long_before_its_cache_would_forget(
    workers: tuple[LiveServer, LiveServer],
) -> None:
    worker_a, worker_b = workers
    made = "from tokens.models import AgentToken, Scope; print(AgentToken.issue('revoked-bot', scope=Scope.ANSWER)[1])"
    raw = worker_a.manage("shell", "-c", made).strip().splitlines()[-1]
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw}"}, timeout=60) as http:
        for worker in (worker_a, worker_b):  # each worker now holds the token in its cache
            for _ in range(2):
                assert (await http.get(f"{worker.url}/api/questions")).status_code == 200
        # Revoked by another process (a shell, as an admin's would be): the change goes through Redis.
        worker_b.manage(
            "shell", "-c", "from tokens.models import AgentToken; AgentToken.objects.get(name='revoked-bot').revoke()"
        )
        revoked_at = asyncio.get_running_loop().time()
        for worker in (worker_a, worker_b):
            # Heard through Redis, not re-read when the cached row grows old (60 s in these workers). How
            # fast (well under a second on a quiet machine) is a benchmark's figure: in the parallel suite a
            # worker's answer alone can take a second.
            while (status := (await http.get(f"{worker.url}/api/questions")).status_code) == 200:
                took = asyncio.get_running_loop().time() - revoked_at
                assert took < 30 < CACHED_FOR, f"{worker.url} still takes the token"
                await asyncio.sleep(0.02)
            assert status == 401
