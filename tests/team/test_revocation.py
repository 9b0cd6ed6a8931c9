"""Team mode, issue 37: taking access away reaches every worker at once, through Redis.

Two daphne workers on the real PostgreSQL and Redis (testing/team.py). The change is made where an admin
makes it, in a process of its own (`manage.py shell`); the sockets open on a worker that made no change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx2
import pytest
import websockets
from websockets.typing import Origin

from testing.live import LiveServer, closed_with
from testing.team import two_workers

REVOKED = 4410


@pytest.fixture(scope="module")
def workers() -> Iterator[tuple[LiveServer, LiveServer]]:
    with two_workers(HOOKBRIDGE_MAX_HOLD="60") as both:
        yield both


async def test_a_token_revoked_in_a_shell_closes_its_socket_on_another_worker_and_is_refused_there(
    workers: tuple[LiveServer, LiveServer],
) -> None:
    worker_a, worker_b = workers
    async with websockets.connect(
        f"ws://127.0.0.1:{worker_b.port}/ws/events/",
        additional_headers=worker_b.auth("answer-bot-2"),
        origin=Origin(worker_b.url),
    ) as socket:
        await socket.recv()  # the state on connect
        await asyncio.to_thread(
            worker_a.manage, "shell", "-c",
            "from tokens.models import AgentToken; AgentToken.objects.get(name='answer-bot-2').revoke()",
        )  # fmt: skip
        # Told through Redis at once; the cached row would be re-read only after HOOKBRIDGE_ACCESS_CHECK_SECONDS.
        assert await closed_with(socket, 30) == REVOKED
    async with httpx2.AsyncClient(timeout=60) as http:
        for worker in (worker_a, worker_b):
            refused = await http.get(f"{worker.url}/api/questions", headers=worker.auth("answer-bot-2"))
            assert refused.status_code == 401


async def test_a_person_deactivated_in_a_shell_loses_their_open_dashboard_on_another_worker(
    workers: tuple[LiveServer, LiveServer],
) -> None:
    worker_a, worker_b = workers
    await asyncio.to_thread(
        worker_a.manage, "shell", "-c",
        "from django.contrib.auth.models import User; User.objects.create_user('dora', password='pw-dora-123')",
    )  # fmt: skip
    async with httpx2.AsyncClient(base_url=worker_b.url, follow_redirects=False, timeout=60) as browser:
        page = await browser.get("/accounts/login/")
        csrf = page.cookies.get("csrftoken") or browser.cookies.get("csrftoken")
        logged = await browser.post(
            "/accounts/login/",
            data={"username": "dora", "password": "pw-dora-123", "csrfmiddlewaretoken": csrf},
            headers={"Referer": f"{worker_b.url}/accounts/login/"},
        )
        assert logged.status_code == 302
        async with worker_b.dashboard_socket(browser) as socket:
            await socket.recv()
            await asyncio.to_thread(
                worker_a.manage, "shell", "-c",
                "from django.contrib.auth.models import User; u = User.objects.get(username='dora'); "
                "u.is_active = False; u.save()",
            )  # fmt: skip
            assert await closed_with(socket, 10) == REVOKED
        assert (await browser.get("/")).status_code == 302, "signed out on every worker"
