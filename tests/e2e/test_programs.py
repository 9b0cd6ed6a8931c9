"""Programs on a real daphne process (issue 16): a backend choosing its session's guid, a UI watching
/ws/<guid> with a bearer token, and a bot that watches /ws/events/ and answers through the API."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from testing.live import LiveServer, text_of


@asynccontextmanager
async def program_socket(
    server: LiveServer, path: str, token_name: str, *, via: str = "header"
) -> AsyncIterator[ClientConnection]:
    """A WebSocket as a program opens it: a bearer token, no cookie, no Origin."""
    token = server.tokens[token_name]
    if via == "header":
        options: dict[str, Any] = {"additional_headers": {"Authorization": f"Bearer {token}"}}
    else:
        options = {"subprotocols": ["hookbridge", f"bearer.{token}"]}
    async with websockets.connect(f"ws://127.0.0.1:{server.port}{path}", **options) as socket:
        yield socket


async def next_of(
    socket: ClientConnection, kind: str, timeout: float = 10, where: Callable[[dict[str, Any]], bool] = bool
) -> dict[str, Any]:
    """The next message of type `kind` that `where` accepts, skipping others."""
    async with asyncio.timeout(timeout):
        while True:
            message: dict[str, Any] = json.loads(await socket.recv())
            if message["type"] == kind and where(message):
                return message


async def create_session(server: LiveServer, token_name: str, **body: Any) -> httpx2.Response:
    async with httpx2.AsyncClient(headers=server.auth(token_name), timeout=60) as http:
        return await http.post(f"{server.url}/api/sessions", json=body)


async def test_a_backend_chooses_its_sessions_guid(live_server_proc: LiveServer) -> None:
    guid = str(uuid.uuid4())
    created = await create_session(live_server_proc, "agent-a", guid=guid, name="Chosen")
    again = await create_session(live_server_proc, "agent-a", guid=guid, name="Chosen")
    taken = await create_session(live_server_proc, "agent-b", guid=guid)
    malformed = await create_session(live_server_proc, "agent-a", guid="session-1")
    assert (created.status_code, created.json()["guid"], created.json()["name"]) == (201, guid, "Chosen")
    assert (again.status_code, again.json()["guid"]) == (200, guid)
    assert taken.status_code == 409
    assert taken.json()["field"] == "guid"
    assert "Chosen" not in taken.text
    assert malformed.status_code == 400
    assert malformed.json()["field"] == "guid"
    async with live_server_proc.mcp("2026-07-28", path="/mcp/progress") as client:
        result = await client.call_tool("notify_ack", {"guid": guid})
    assert not result.is_error, text_of(result)


@pytest.mark.parametrize("path", ["/ws/{guid}", "/ws/sessions/{guid}/"])
@pytest.mark.parametrize("via", ["header", "subprotocol"])
async def test_a_program_with_a_bearer_token_watches_a_run_in_order(
    live_server_proc: LiveServer, path: str, via: str
) -> None:
    guid = str(uuid.uuid4())
    assert (await create_session(live_server_proc, "agent-a", guid=guid)).status_code == 201
    run: list[tuple[str, dict[str, Any]]] = [
        ("notify_ack", {}),
        ("send_progress", {"percent": 40}),
        ("send_status", {"message": "Writing the fix"}),
        ("send_response", {"content": "Done: the **login** bug."}),
        ("notify_complete", {"success": True}),
        ("notify_error", {"error": "Post-run cleanup failed", "recoverable": True}),
    ]
    async with program_socket(live_server_proc, path.format(guid=guid), "agent-a", via=via) as socket:
        if via == "subprotocol":
            assert socket.subprotocol == "hookbridge"
        async with live_server_proc.mcp("legacy", path="/mcp/progress") as client:
            for tool, arguments in run:
                assert not (await client.call_tool(tool, {"guid": guid, **arguments})).is_error
        received: list[dict[str, Any]] = []
        async with asyncio.timeout(10):
            while len(received) < len(run):
                received.append(json.loads(await socket.recv()))
    assert [m["type"] for m in received] == ["ack", "progress", "status", "response", "complete", "error"]
    assert all(m["guid"] == guid and m["timestamp"] for m in received)
    assert received[2]["message"] == "Writing the fix"
    assert received[3]["content"] == "Done: the **login** bug."
    assert (received[5]["error"], received[5]["recoverable"]) == ("Post-run cleanup failed", True)


async def test_another_agents_token_cannot_watch_and_an_answering_token_can_read(
    live_server_proc: LiveServer,
) -> None:
    guid = str(uuid.uuid4())
    await create_session(live_server_proc, "agent-a", guid=guid)
    async with live_server_proc.mcp("legacy", path="/mcp/progress") as client:
        await client.call_tool("send_response", {"guid": guid, "content": "The answer is 42."})
    with pytest.raises(websockets.InvalidStatus) as refused:
        async with program_socket(live_server_proc, f"/ws/{guid}", "agent-b"):
            pass
    assert refused.value.response.status_code == 403
    assert (await live_server_proc.session_state(guid, "agent-b")).status_code == 404
    read = await live_server_proc.session_state(guid, "answer-bot")
    assert read.status_code == 200
    assert read.json()["response"] == "The answer is 42."
    async with httpx2.AsyncClient(headers=live_server_proc.auth("answer-bot"), timeout=60) as http:
        close = await http.delete(f"{live_server_proc.url}/api/sessions/{guid}")
    assert close.status_code == 403
    assert (await live_server_proc.session_state(guid)).json()["closedAt"] is None


async def test_a_bot_watches_the_event_stream_and_answers_through_the_api(live_server_proc: LiveServer) -> None:
    text = f"Ship the release now? ({uuid.uuid4().hex[:6]})"
    async with program_socket(live_server_proc, "/ws/events/", "answer-bot") as events:
        queued = await next_of(events, "questions-queued")
        assert isinstance(queued["questions"], list)
        assert queued["timestamp"]
        async with live_server_proc.mcp("2026-07-28") as client:
            call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
            received = await next_of(events, "question-received", where=lambda m: m["question"]["question"] == text)
            assert received["question"]["question"] == text
            assert received["question"]["status"] == "pending"
            # The id in the message is the one the API takes.
            answered = await live_server_proc.answer_via_api(received["questionId"], "Yes, ship it")
            assert answered.status_code == 200, answered.text
            result = await asyncio.wait_for(call, 30)
        done = await next_of(events, "question-answered", where=lambda m: m["questionId"] == received["questionId"])
    assert done["questionId"] == received["questionId"]
    assert (done["answer"]["text"], done["answer"]["answeredBy"]) == ("Yes, ship it", "answer-bot")
    assert done["question"]["status"] == "answered"
    assert json.loads(text_of(result)) == {"answer": "Yes, ship it"}


async def test_the_event_stream_reports_lifecycle_sessions_and_pending_questions_on_connect(
    live_server_proc: LiveServer,
) -> None:
    text = f"Which region? ({uuid.uuid4().hex[:6]})"
    async with live_server_proc.mcp("legacy", token_name="agent-b") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        pending = await live_server_proc.wait_for_question(text)
        async with live_server_proc.login() as browser, live_server_proc.socket("/ws/events/", browser) as events:
            queued = await next_of(events, "questions-queued")
            assert pending["id"] in [q["id"] for q in queued["questions"]]
            await client.call_tool(
                "submit_lifecycle_event", {"event_type": "phase-started", "phase_name": "Deploy", "phase_number": "4"}
            )
            # Earlier tests' agents are at work too: on connect, each one's latest event came first.
            lifecycle = await next_of(events, "lifecycle", where=lambda m: m["event"].get("phase_name") == "Deploy")
            guid = (await create_session(live_server_proc, "agent-a", name="Streamed")).json()["guid"]
            opened = await next_of(events, "session-opened", where=lambda m: m["session"] == guid)
            async with live_server_proc.mcp("legacy", path="/mcp/progress") as progress:
                await progress.call_tool("send_progress", {"guid": guid, "percent": 5})
            session_event = await next_of(events, "session-event", where=lambda m: m["session"] == guid)
            async with live_server_proc.login() as person:
                await person.post(f"/questions/{pending['id']}/dismiss")
            cancelled = await next_of(events, "question-cancelled", where=lambda m: m["questionId"] == pending["id"])
        await asyncio.wait_for(call, 30)
    assert {k: lifecycle["event"][k] for k in ("event_type", "phase_name", "phase_number", "sent_by")} == {
        "event_type": "phase-started",
        "phase_name": "Deploy",
        "phase_number": "4",
        "sent_by": "agent-b",
    }
    assert (opened["session"], opened["state"]["name"]) == (guid, "Streamed")
    assert (session_event["session"], session_event["event"]["type"], session_event["event"]["percent"]) == (
        guid,
        "progress",
        5,
    )
    assert (cancelled["questionId"], cancelled["reason"], cancelled["dismissedBy"]) == (
        pending["id"],
        "dismissed",
        live_server_proc.username,
    )


async def test_an_agent_token_cannot_open_the_event_stream(live_server_proc: LiveServer) -> None:
    with pytest.raises(websockets.InvalidStatus) as refused:
        async with program_socket(live_server_proc, "/ws/events/", "agent-a"):
            pass
    assert refused.value.response.status_code == 403
