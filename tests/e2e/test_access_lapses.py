"""Issue 54: access taken away by a path that sends no signal (a bulk update, as a directory sync or a script
makes one) still ends: every open socket of that person or token closes with 4410, and the token is refused over
HTTP, against a real daphne. The bound is HOOKBRIDGE_ACCESS_CHECK_SECONDS (3 s) for sockets and HTTP alike, by
construction; the test waits longer than that (a slow machine is not a bug) and checks what is said."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx2
import pytest
import websockets
from websockets.typing import Origin

from testing.live import LiveServer, closed_with, serving

REVOKED = 4410

ANN = """
import json
from django.contrib.auth.models import User
from projects.models import Project
from tokens.models import AgentToken, Scope
ann = User.objects.create_user("ann")
Project.default().set_member(ann, "answerer")
print(json.dumps({"ann": AgentToken.issue("ann-answers", scope=Scope.ANSWER, user=ann)[1]}))
"""


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


async def test_a_person_deactivated_by_a_bulk_update_loses_their_open_sockets_and_their_token(
    server: LiveServer,
) -> None:
    raw = json.loads(server.manage("shell", "-c", ANN).strip().splitlines()[-1])["ann"]
    bearer = {"Authorization": f"Bearer {raw}"}
    async with httpx2.AsyncClient(headers=bearer, timeout=60) as http:
        assert (await http.get(f"{server.url}/api/questions")).status_code == 200  # and now cached in the worker
    async with (
        server.login() as browser,
        websockets.connect(
            f"ws://127.0.0.1:{server.port}/ws/events/", additional_headers=bearer, origin=Origin(server.url)
        ) as token_socket,
        server.dashboard_socket(browser) as page_socket,
    ):
        await token_socket.recv()  # the state on connect
        await page_socket.recv()
        # No save(), no signal: what a directory sync or a script does. alice is the dashboard's person here.
        bulk = "from django.contrib.auth.models import User; User.objects.filter(username__in=['ann', 'alice'])"
        await asyncio.to_thread(server.manage, "shell", "-c", bulk + ".update(is_active=False)")
        try:
            assert await closed_with(token_socket, 30) == REVOKED
            assert await closed_with(page_socket, 30) == REVOKED
            async with httpx2.AsyncClient(headers=bearer, timeout=60) as http:
                for _ in range(60):
                    refused = await http.get(f"{server.url}/api/questions")
                    if refused.status_code != 200:
                        break
                    await asyncio.sleep(0.5)
            assert refused.status_code == 401, refused.text
        finally:
            await asyncio.to_thread(server.manage, "shell", "-c", bulk + ".update(is_active=True)")
    assert "Exception inside application" not in server.log()
