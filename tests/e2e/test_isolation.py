"""Two agents on one server (issue 27, point 1): agent-b walks every tool, every API route and every
socket an agent token reaches, aimed at agent-a's work. Nothing of agent-a's comes back, nothing of
agent-a's changes, and agent-b's look-alike asks never join agent-a's.

The walk is complete by construction: it fails when a tool, an /api/ route or a socket route exists
that it does not walk, so a new surface is walked (and judged) before it ships.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
import websockets
from mcp import Client
from websockets.typing import Origin

from testing.live import LiveServer, text_of

SECRET = "SECRET-OF-AGENT-A"
ENDPOINT = "/mcp/maxsim+askme+clifford+progress+approvals"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "claude_code_hooks"


@dataclass
class AgentAsWork:
    """What agent-a has going while agent-b walks: a session, events, and calls waiting for a person."""

    session: str
    claude_session: str
    question_texts: dict[str, str] = field(default_factory=dict)  # question id -> its text
    waiting: list[asyncio.Task[Any]] = field(default_factory=list)
    client: Client | None = None  # agent-a's own, to check that its view did not change


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    live = LiveServer()
    live.setup()
    try:
        yield live
    finally:
        live.close()


def claude_body(event: str, session_id: str, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{event}.json").read_text())
    return {**data, "session_id": session_id, **changes}


@asynccontextmanager
async def agent_a_at_work(server: LiveServer) -> AsyncIterator[AgentAsWork]:
    session = await server.open_session("agent-a", name=f"{SECRET} session", project=f"{SECRET} project")
    claude_session = str(uuid.uuid4())
    work = AgentAsWork(session=session, claude_session=claude_session)
    async with server.mcp("legacy", "agent-a", path=ENDPOINT) as a:
        work.client = a
        await a.call_tool("submit_lifecycle_event", {"event_type": "phase-started", "phase_name": f"{SECRET} phase"})
        await a.call_tool("send_status", {"guid": session, "message": f"{SECRET} status", "phase": f"{SECRET}"})
        asks: dict[str, dict[str, Any]] = {
            "ask_question": {"question": f"{SECRET}: which port?"},
            "ask-one-question": {"question": f"{SECRET}: which colour?"},
            "request_help": {"task": f"{SECRET} task", "reason": "stuck", "question": f"{SECRET}: which branch?"},
            "approve": {"tool_name": "Bash", "input": {"command": f"echo {SECRET}"}, "tool_use_id": "toolu_walk"},
        }
        for tool, arguments in asks.items():
            work.waiting.append(asyncio.create_task(a.call_tool(tool, arguments)))
        async with httpx2.AsyncClient(headers=server.auth("agent-a"), timeout=60) as http:
            prompt = claude_body("UserPromptSubmit", claude_session, prompt=f"{SECRET} prompt")
            assert (await http.post(f"{server.url}/hooks/claude", json=prompt)).status_code == 200
        pending = await until_pending(server, 4)
        work.question_texts = {q["id"]: q["question"] for q in pending}
        try:
            yield work
        finally:
            for task in work.waiting:
                task.cancel()
            await asyncio.gather(*work.waiting, return_exceptions=True)


async def until_pending(server: LiveServer, count: int, asker: str = "agent-a") -> list[dict[str, Any]]:
    for _ in range(150):
        mine = [q for q in await server.questions("pending") if q["asker"] == asker]
        if len(mine) >= count:
            return mine
        await asyncio.sleep(0.1)
    raise AssertionError(f"{asker} has {len(mine)} pending questions, not {count}")


def leaks(text: str, work: AgentAsWork) -> list[str]:
    """What of agent-a's a response to agent-b shows: its secret text, its questions' ids, its sessions."""
    found = [SECRET] if SECRET in text else []
    found += [qid for qid in work.question_texts if qid in text]
    found += [sid for sid in (work.session, work.claude_session) if sid in text]
    return found


Walk = Callable[[LiveServer, AgentAsWork, Client], Awaitable[None]]


async def tool_result_text(b: Client, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await b.call_tool(tool, arguments)
    return bool(result.is_error), text_of(result) + json.dumps(result.structured_content or {})


async def walk_read_tool(server: LiveServer, work: AgentAsWork, b: Client) -> None:
    _, text = await tool_result_text(b, "get_phase_status", {})
    assert leaks(text, work) == []
    assert json.loads(text_of(await b.call_tool("get_phase_status", {})))["pendingQuestions"] == 0


async def walk_wait_for_answer(server: LiveServer, work: AgentAsWork, b: Client) -> None:
    for qid in work.question_texts:
        is_error, text = await tool_result_text(b, "wait_for_answer", {"question_id": qid})
        assert is_error, text
        # Refused exactly like a question that does not exist: the id is the caller's own, nothing more.
        assert leaks(text.replace(qid, ""), work) == []
        unknown = str(uuid.uuid4())
        _, nothing = await tool_result_text(b, "wait_for_answer", {"question_id": unknown})
        assert text.replace(qid, "<id>") == nothing.replace(unknown, "<id>")


async def walk_progress_tools(server: LiveServer, work: AgentAsWork, b: Client) -> None:
    calls: dict[str, dict[str, Any]] = {
        "notify_ack": {"guid": work.session},
        "send_progress": {"guid": work.session, "percent": 50},
        "send_status": {"guid": work.session, "message": "B was here", "phase": "B"},
        "send_response": {"guid": work.session, "content": "B was here"},
        "notify_error": {"guid": work.session, "error": "B was here", "recoverable": True},
        "notify_complete": {"guid": work.session, "success": True},
    }
    for tool, arguments in calls.items():
        is_error, text = await tool_result_text(b, tool, arguments)
        assert is_error, f"{tool}: {text}"
        assert leaks(text.replace(work.session, ""), work) == [], tool
    state = (await server.session_state(work.session, "agent-a")).json()
    assert "B was here" not in json.dumps(state)
    assert state["status"] not in ("completed", "failed"), "agent-b closed agent-a's session"


async def walk_lifecycle_tool(server: LiveServer, work: AgentAsWork, b: Client) -> None:
    is_error, _ = await tool_result_text(b, "submit_lifecycle_event", {"event_type": "task-started"})
    assert not is_error
    assert work.client is not None
    a_status = json.loads(text_of(await work.client.call_tool("get_phase_status", {})))
    assert a_status["lastLifecycleEvent"]["phase_name"] == f"{SECRET} phase"


async def walk_asking_tools(server: LiveServer, work: AgentAsWork, b: Client) -> None:
    """The same words as agent-a's, even the same tool_use_id: agent-b's own new questions, never agent-a's."""
    same: dict[str, dict[str, Any]] = {
        "ask_question": {"question": f"{SECRET}: which port?"},
        "ask-one-question": {"question": f"{SECRET}: which colour?"},
        "request_help": {"task": f"{SECRET} task", "reason": "stuck", "question": f"{SECRET}: which branch?"},
        "approve": {"tool_name": "Bash", "input": {"command": f"echo {SECRET}"}, "tool_use_id": "toolu_walk"},
        "ask-multiple-choice": {"questions": [{"text": "B: one or two?", "options": ["one", "two"]}]},
        "challenge-hypothesis": {"title": "B's idea", "description": "B", "hypotheses": ["B thinks so"]},
        "choose-next": {
            "title": "B next",
            "description": "B",
            "options": [
                {"id": "o1", "title": "B's way", "description": ""},
                {"id": "o2", "title": "Or", "description": ""},
            ],
        },
    }
    b_calls = {tool: asyncio.create_task(b.call_tool(tool, arguments)) for tool, arguments in same.items()}
    try:
        await asyncio.sleep(0.5)
        refused = {tool: text_of(call.result()) for tool, call in b_calls.items() if call.done()}
        assert refused == {}, refused
        b_pending = await until_pending(server, len(same), asker="agent-b")
        assert not set(work.question_texts) & {q["id"] for q in b_pending}, "agent-b joined agent-a's question"
        # Answering agent-a's questions ends none of agent-b's calls.
        for qid, text in work.question_texts.items():
            answer: object = (
                {"behavior": "deny", "message": "for agent-a only"} if "Bash" in text else "for agent-a only"
            )
            assert (await server.answer_via_api(qid, answer)).status_code == 200, text
        for call in work.waiting:
            assert "for agent-a only" in text_of(await asyncio.wait_for(call, 30))
        await asyncio.sleep(0.5)
        assert [tool for tool, call in b_calls.items() if call.done()] == []
    finally:
        for call in b_calls.values():
            call.cancel()
        await asyncio.gather(*b_calls.values(), return_exceptions=True)


TOOL_WALKS: dict[str, Walk] = {
    "get_phase_status": walk_read_tool,
    "wait_for_answer": walk_wait_for_answer,
    "submit_lifecycle_event": walk_lifecycle_tool,
    **dict.fromkeys(
        ["notify_ack", "send_progress", "send_status", "send_response", "notify_complete", "notify_error"],
        walk_progress_tools,
    ),
    **dict.fromkeys(
        [
            "ask_question",
            "ask-one-question",
            "ask-multiple-choice",
            "challenge-hypothesis",
            "choose-next",
            "request_help",
            "approve",
        ],
        walk_asking_tools,
    ),
}


async def walk_routes(server: LiveServer, work: AgentAsWork) -> set[str]:
    """Every /api/ route and /hooks/claude with agent-b's token, aimed at agent-a's work; the routes walked."""
    walked: set[str] = set()
    async with httpx2.AsyncClient(headers=server.auth("agent-b"), timeout=60) as http:
        listed = await http.get(f"{server.url}/api/questions")
        assert listed.status_code == 200
        assert leaks(listed.text, work) == []
        walked.add("api/questions")

        for method in ("GET", "DELETE"):
            response = await http.request(method, f"{server.url}/api/sessions/{work.session}")
            unknown = await http.request(method, f"{server.url}/api/sessions/{uuid.uuid4()}")
            assert response.status_code == unknown.status_code == 404, method
            assert leaks(response.text.replace(work.session, ""), work) == []
        walked.add("api/sessions/<uuid:guid>")

        created = await http.post(f"{server.url}/api/sessions", json={"name": "B's own"})
        assert created.status_code == 201
        assert created.json()["guid"] != work.session
        walked.add("api/sessions")

        steer = await http.post(f"{server.url}/api/sessions/{work.session}/messages", json={"text": "B steers"})
        assert steer.status_code == 403, steer.text  # answering tokens and people steer; agents do not
        walked.add("api/sessions/<uuid:guid>/messages")

        for path in (f"api/questions/{qid}/dismiss" for qid in work.question_texts):
            assert (await http.post(f"{server.url}/{path}", json={})).status_code == 403
        walked.add("api/questions/<uuid:question_id>/dismiss")
        answer = {"questionId": next(iter(work.question_texts)), "answer": "B answers"}
        assert (await http.post(f"{server.url}/api/mcp-answer", json=answer)).status_code == 403
        walked.add("api/mcp-answer")

        # Claude Code's hooks: agent-a's host session id is agent-a's; agent-b's events do not land in it.
        taken = await http.post(
            f"{server.url}/hooks/claude", json=claude_body("UserPromptSubmit", work.claude_session, prompt="B")
        )
        assert taken.status_code in (403, 409), taken.text
        assert leaks(taken.text.replace(work.claude_session, ""), work) == []
        walked.add("hooks/claude")
    state = (await server.session_state(work.session, "agent-a")).json()
    assert state["status"] != "closed", "agent-b closed agent-a's session"
    return walked


async def walk_sockets(server: LiveServer, work: AgentAsWork) -> set[str]:
    """Every socket route, opened with agent-b's token at agent-a's session: refused before any state is sent."""
    origin = Origin(server.url)
    headers = server.auth("agent-b")
    paths = {
        "ws/sessions/<uuid:guid>/": f"/ws/sessions/{work.session}/",
        "ws/<uuid:guid>": f"/ws/{work.session}",
        "ws/sessions/<uuid:guid>/page/": f"/ws/sessions/{work.session}/page/",
        "ws/sessions/": "/ws/sessions/",
        "ws/events/": "/ws/events/",
        "ws/dashboard/": "/ws/dashboard/",
        "ws/hooks/runs/<uuid:run_id>/": f"/ws/hooks/runs/{uuid.uuid4()}/",
    }
    for path in paths.values():
        url = f"ws://127.0.0.1:{server.port}{path}"
        received: list[str] = []
        try:
            async with websockets.connect(url, additional_headers=headers, origin=origin, open_timeout=5) as socket:
                while True:
                    received.append(str(await asyncio.wait_for(socket.recv(), 30)))
        except (websockets.ConnectionClosed, websockets.InvalidStatus, TimeoutError):
            pass
        assert leaks("".join(received), work) == [], path
        assert received == [], f"{path} sent agent-b {received[:1]}"
    return set(paths)


def routes_reaching_tokens() -> tuple[set[str], set[str]]:
    """The /api/ routes and socket routes as Django and Channels list them: what the walk must cover."""
    from django.urls import URLPattern, URLResolver, get_resolver

    from dashboard.routing import websocket_urlpatterns as dashboard_sockets
    from hooks.routing import websocket_urlpatterns as hook_sockets
    from lifecycle.routing import websocket_urlpatterns as lifecycle_sockets

    def flatten(patterns: list[Any], prefix: str = "") -> Iterator[str]:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                yield from flatten(entry.url_patterns, prefix + str(entry.pattern))
            elif isinstance(entry, URLPattern):
                yield prefix + str(entry.pattern)

    http_routes = {route for route in flatten(get_resolver().url_patterns) if route.startswith("api/")}
    socket_routes = set(flatten([*dashboard_sockets, *lifecycle_sockets, *hook_sockets]))
    return http_routes | {"hooks/claude"}, socket_routes


async def test_agent_b_sees_and_changes_nothing_of_agent_a_on_any_surface(server: LiveServer) -> None:
    async with agent_a_at_work(server) as work, server.mcp("legacy", "agent-b", path=ENDPOINT) as b:
        listed = {tool.name for tool in (await b.list_tools()).tools}
        assert listed == set(TOOL_WALKS), f"walk these tools too: {listed - set(TOOL_WALKS)}"
        routes = await walk_routes(server, work)
        sockets = await walk_sockets(server, work)
        for walk in dict.fromkeys(TOOL_WALKS.values()):  # each walk once, the asking tools last
            if walk is not walk_asking_tools:
                await walk(server, work, b)
        await walk_asking_tools(server, work, b)
    http_routes, socket_routes = routes_reaching_tokens()
    assert routes == http_routes, f"walk these routes too: {http_routes - routes}"
    assert sockets == socket_routes, f"walk these sockets too: {socket_routes - sockets}"
