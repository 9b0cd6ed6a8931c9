"""Agent sessions and the progress set, over real HTTP and WebSocket."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from typing import Any

import httpx2
import pytest

from testing.live import LiveServer, text_of

RUN: list[tuple[str, dict[str, Any]]] = [
    ("notify_ack", {}),
    ("send_progress", {"percent": 10}),
    ("send_status", {"message": "Reading the code", "phase": "analyzing"}),
    ("send_progress", {"percent": 55}),
    ("send_status", {"message": "Writing the fix", "phase": "implementing"}),
    ("send_progress", {"percent": 100}),
    ("send_response", {"content": "Fixed the **login** bug."}),
    ("notify_complete", {"success": True}),
]
EXPECTED = [
    {"type": "ack"},
    {"type": "progress", "percent": 10},
    {"type": "status", "message": "Reading the code", "phase": "analyzing"},
    {"type": "progress", "percent": 55},
    {"type": "status", "message": "Writing the fix", "phase": "implementing"},
    {"type": "progress", "percent": 100},
    {"type": "response", "content": "Fixed the **login** bug."},
    {"type": "complete", "success": True},
]


async def receive_json(socket: Any, count: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    async with asyncio.timeout(10):
        while len(messages) < count:
            messages.append(json.loads(await socket.recv()))
    return messages


def without_timestamp(message: dict[str, Any], guid: str) -> dict[str, Any]:
    assert message.pop("guid") == guid
    stamp = message.pop("timestamp")
    assert datetime.fromisoformat(stamp).tzinfo is not None, stamp
    return message


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_full_run_is_stored_and_streamed_in_order(live_server_proc: LiveServer, mode: str) -> None:
    guid = await live_server_proc.open_session(name=f"Fix login ({mode})", project="web")
    async with live_server_proc.login() as browser, live_server_proc.socket(f"/ws/sessions/{guid}/", browser) as socket:
        async with live_server_proc.mcp(mode, path="/mcp/progress") as client:
            for tool, arguments in RUN:
                result = await client.call_tool(tool, {"guid": guid, **arguments})
                assert not result.is_error, text_of(result)
        messages = await receive_json(socket, len(RUN))
    assert [without_timestamp(m, guid) for m in messages] == EXPECTED

    state = (await live_server_proc.session_state(guid)).json()
    assert state["progress"] == 100
    assert state["status"] == {"message": "Writing the fix", "phase": "implementing"}
    assert state["response"] == "Fixed the **login** bug."
    assert state["completion"]["success"] is True
    assert state["state"] == "completed"
    assert state["ackedAt"]
    assert state["error"] is None
    assert (state["name"], state["project"], state["owner"]) == (f"Fix login ({mode})", "web", "agent-a")


async def test_a_socket_that_connects_mid_run_gets_the_current_state_first(live_server_proc: LiveServer) -> None:
    guid = await live_server_proc.open_session(name="Reconnect")
    async with live_server_proc.mcp("legacy", path="/mcp/progress") as client:
        for tool, arguments in RUN[:5]:
            await client.call_tool(tool, {"guid": guid, **arguments})
        async with (
            live_server_proc.login() as browser,
            live_server_proc.socket(f"/ws/sessions/{guid}/", browser) as socket,
        ):
            state = [without_timestamp(m, guid) for m in await receive_json(socket, 3)]
            # The latest of each kind, in the order they happened.
            assert state == [EXPECTED[0], EXPECTED[3], EXPECTED[4]]
            await client.call_tool("notify_error", {"guid": guid, "error": "Disk full", "recoverable": True})
            (live,) = await receive_json(socket, 1)
    assert without_timestamp(live, guid) == {"type": "error", "error": "Disk full", "recoverable": True}
    state = (await live_server_proc.session_state(guid)).json()
    assert state["error"] == {"error": "Disk full", "recoverable": True}
    assert [(e["error"], e["recoverable"]) for e in state["errors"]] == [("Disk full", True)]


@pytest.mark.parametrize(
    ("tool", "arguments", "argument"),
    [
        ("send_progress", {"percent": 101}, "percent"),
        ("send_progress", {"percent": -1}, "percent"),
        ("send_progress", {"percent": "50"}, "percent"),
        ("send_status", {"message": "zzz", "phase": "sleeping"}, "phase"),
        ("notify_error", {}, "error"),
    ],
)
async def test_bad_progress_input_is_refused_and_stores_nothing(
    live_server_proc: LiveServer, tool: str, arguments: dict[str, Any], argument: str
) -> None:
    guid = await live_server_proc.open_session()
    async with live_server_proc.mcp("legacy", path="/mcp/progress") as client:
        result = await client.call_tool(tool, {"guid": guid, **arguments})
    assert result.is_error
    assert argument in text_of(result)
    state = (await live_server_proc.session_state(guid)).json()
    assert (state["progress"], state["status"], state["error"], state["ackedAt"]) == (None, None, None, None)


async def test_unknown_closed_and_foreign_sessions_are_refused(live_server_proc: LiveServer) -> None:
    closed = await live_server_proc.open_session()
    async with httpx2.AsyncClient(headers=live_server_proc.auth(), timeout=60) as http:
        assert (await http.delete(f"{live_server_proc.url}/api/sessions/{closed}")).json()["closedAt"]
    foreign = await live_server_proc.open_session(token_name="agent-b")
    async with live_server_proc.mcp("legacy", path="/mcp/progress") as client:
        for guid, needle in [
            ("5f0c1c5e-4a7e-4c43-9d4c-000000000000", "no session"),
            ("not-a-guid", "not a session guid"),
            (closed, "is closed"),
            (foreign, "no session"),
        ]:
            result = await client.call_tool("notify_ack", {"guid": guid})
            assert result.is_error, text_of(result)
            assert needle in text_of(result), text_of(result)
    assert (await live_server_proc.session_state(closed)).json()["ackedAt"] is None
    assert (await live_server_proc.session_state(foreign)).status_code == 404
    assert (await live_server_proc.session_state(foreign, token_name="agent-b")).json()["ackedAt"] is None


async def test_the_sessions_api_needs_a_token_and_checks_its_input(live_server_proc: LiveServer) -> None:
    async with httpx2.AsyncClient(base_url=live_server_proc.url, timeout=60) as http:
        assert (await http.post("/api/sessions", json={})).status_code == 401
        bad = await http.post("/api/sessions", json={"name": 5}, headers=live_server_proc.auth())
        assert bad.status_code == 400
        assert bad.json()["field"] == "name"
        missing = await http.get("/api/sessions/5f0c1c5e-4a7e-4c43-9d4c-000000000000", headers=live_server_proc.auth())
        assert missing.status_code == 404


async def test_a_sessions_questions_and_lifecycle_events_belong_to_it(live_server_proc: LiveServer) -> None:
    guid = await live_server_proc.open_session(token_name="agent-b", name="With questions")
    async with live_server_proc.mcp("legacy", path="/mcp/progress+maxsim", token_name="agent-b") as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"notify_ack", "ask_question"} <= tools
        await client.call_tool("submit_lifecycle_event", {"event_type": "phase-started", "phase_name": "Build"})
        call = asyncio.create_task(client.call_tool("ask_question", {"question": "Which branch (session)?"}))
        question = await live_server_proc.wait_for_question("Which branch (session)?")
        assert (await live_server_proc.session_state(guid, "agent-b")).json()["state"] == "waiting for a human"
        await live_server_proc.answer_via_api(question["id"], "main")
        await asyncio.wait_for(call, 30)
    async with live_server_proc.login() as browser:
        page = (await browser.get(f"/sessions/{guid}/")).text
    assert "Which branch (session)?" in page
    assert "main" in page
    assert 'class="phase open" data-label="Build"' in page
