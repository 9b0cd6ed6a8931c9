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

from testing.approval_world import shop_with_policy
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
    response = await asyncio.wait_for(request, 30)
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


async def test_two_people_allowing_at_once_on_two_workers_make_one_decision_counted_once_each(
    workers: tuple[LiveServer, LiveServer], tmp_path: Path
) -> None:
    """Issue 53: the votes are rows and the decision one conditional update, so a race on two workers decides once."""
    first, second = workers
    raw = shop_with_policy(first, tmp_path)
    await asyncio.sleep(1.2)  # each worker re-reads the policies a second after its last read

    async def api(server: LiveServer, who: str, question_id: str) -> httpx2.Response:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw[who]}"}, timeout=30) as http:
            body = {"questionId": question_id, "answer": {"behavior": "allow"}}
            return await http.post(f"{server.url}/api/mcp-answer", json=body)

    for round_ in range(4):
        body = json.loads((FIXTURES / "PreToolUse.json").read_text())
        command = f"git push origin release-{round_}"
        body.update(session_id=str(uuid.uuid4()), tool_input={"command": command})
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw['agent']}"}, timeout=30) as http:
            held = asyncio.ensure_future(http.post(f"{first.url}/hooks/claude?approve=1", json=body))
            approval = None
            ann_http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw['ann']}"}, timeout=30)
            async with ann_http:
                for _ in range(200):
                    pending = (await ann_http.get(f"{second.url}/api/questions?status=pending")).json()["questions"]
                    approval = next((q for q in pending if q["payload"]["tool_input"].get("command") == command), None)
                    if approval or held.done():
                        break
                    await asyncio.sleep(0.05)
            assert approval is not None, held.result().text if held.done() else "no approval"
            ann, bob = await asyncio.gather(api(first, "ann", approval["id"]), api(second, "bob", approval["id"]))
            assert sorted([ann.status_code, bob.status_code]) == [200, 202], (ann.text, bob.text)
            counted = ann if ann.status_code == 202 else bob
            assert counted.json()["decided"] == 1
            output = (await asyncio.wait_for(held, 30)).json()["hookSpecificOutput"]
        assert output["permissionDecision"] == "allow"
        assert output["permissionDecisionReason"] in (
            "Allowed by ann, bob on Hook Bridge",
            "Allowed by bob, ann on Hook Bridge",
        )
