"""Claude Code's approvals in team mode: two daphne workers sharing the real PostgreSQL and Redis.

Needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379 (see testing/team.py).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from testing.live import LiveServer
from testing.team import two_workers

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "claude_code_hooks"


@pytest.fixture(scope="module")
def workers() -> Iterator[tuple[LiveServer, LiveServer]]:
    with two_workers() as both:
        yield both


async def post(server: LiveServer, body: dict[str, object]) -> httpx2.Response:
    async with httpx2.AsyncClient(headers=server.auth(), timeout=30) as http:
        return await http.post(f"{server.url}/hooks/claude", json=body)


async def test_an_approval_held_on_one_worker_is_decided_on_the_other(workers: tuple[LiveServer, LiveServer]) -> None:
    first, second = workers
    body = json.loads((FIXTURES / "PermissionRequest.json").read_text())
    body["session_id"] = str(uuid.uuid4())
    request = asyncio.ensure_future(post(first, body))
    approval = None
    for _ in range(100):
        approval = next((q for q in await second.questions("pending") if q["kind"] == "approval"), None)
        if approval:
            break
        await asyncio.sleep(0.05)
    assert approval is not None
    answered = await second.answer_via_api(approval["id"], {"behavior": "deny", "message": "Not on Fridays"})
    assert answered.status_code == 200
    response = await asyncio.wait_for(request, 5)
    assert response.json()["hookSpecificOutput"]["decision"] == {"behavior": "deny", "message": "Not on Fridays"}
    # The session is the host's, read from either worker; its messages reach the agent through either.
    async with second.login() as http:
        sent = await http.post(f"/sessions/{body['session_id']}/messages", data={"text": "Pause after this"})
    assert sent.status_code in (200, 302)
    post_tool_use = json.loads((FIXTURES / "PostToolUse.json").read_text())
    post_tool_use["session_id"] = body["session_id"]
    delivered = (await post(first, post_tool_use)).json()
    assert delivered["hookSpecificOutput"]["additionalContext"] == "alice (on Hook Bridge) says: Pause after this"
    assert (await post(second, post_tool_use)).json() == {}
