"""Team mode, issue 57: a person the directory deactivates through SCIM on one worker loses their token's socket on
the other worker at once, and their token on both, through PostgreSQL and Redis (testing/team.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2
import pytest
import websockets
from websockets.typing import Origin

from testing.live import LiveServer, closed_with
from testing.team import two_workers

REVOKED = 4410
SCIM_TOKEN = "scim-token-of-the-team-tests-0123456789abc"
TOKEN_FOR = """
import json
from django.contrib.auth.models import User
from projects.models import Project
from tokens.models import AgentToken, Scope
person = User.objects.get(username="{username}")
Project.default().set_member(person, "answerer")
print(json.dumps({{"raw": AgentToken.issue("their-bot", scope=Scope.ANSWER, user=person)[1]}}))
"""


@pytest.fixture(scope="module")
def workers() -> Iterator[tuple[LiveServer, LiveServer]]:
    with two_workers(HOOKBRIDGE_SCIM_TOKEN=SCIM_TOKEN) as both:
        yield both


async def test_a_scim_deactivation_on_one_worker_closes_the_socket_on_the_other_and_refuses_the_token_on_both(
    workers: tuple[LiveServer, LiveServer],
) -> None:
    worker_a, worker_b = workers
    scim = {"Authorization": f"Bearer {SCIM_TOKEN}"}
    async with httpx2.AsyncClient(base_url=f"{worker_a.url}/scim/v2", headers=scim, timeout=60) as directory:
        made = await directory.post("/Users", json={
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "leaver@acme.example",
            "emails": [{"value": "leaver@acme.example", "primary": True}], "active": True})  # fmt: skip
        assert made.status_code == 201, made.text
        said = worker_a.manage("shell", "-v", "0", "-c", TOKEN_FOR.format(username="leaver@acme.example"))
        bearer = {"Authorization": f"Bearer {json.loads(said.strip().splitlines()[-1])['raw']}"}
        async with websockets.connect(
            f"ws://127.0.0.1:{worker_b.port}/ws/events/", additional_headers=bearer, origin=Origin(worker_b.url)
        ) as socket:
            await socket.recv()
            off = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                   "Operations": [{"op": "replace", "value": {"active": False}}]}  # fmt: skip
            assert (await directory.patch(f"/Users/{made.json()['id']}", json=off)).status_code == 200
            assert await closed_with(socket, 30) == REVOKED
    async with httpx2.AsyncClient(headers=bearer, timeout=60) as agent:
        for worker in (worker_a, worker_b):
            assert (await agent.get(f"{worker.url}/api/questions")).status_code == 401
