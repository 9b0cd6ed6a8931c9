"""Nobody gets in without the right token or login; bad input changes nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest
import websockets
from websockets.typing import Origin

from testing.live import LiveServer, text_of

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.mark.parametrize("authorization", [None, "Bearer hb_not-a-real-token", "Basic YWxpY2U6cHc="])
async def test_mcp_refuses_a_missing_or_wrong_token(live_server_proc: LiveServer, authorization: str | None) -> None:
    headers = dict(MCP_HEADERS)
    if authorization:
        headers["Authorization"] = authorization
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        response = await http.post(f"{live_server_proc.url}/mcp", json=INITIALIZE)
    assert response.status_code == 401
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ")
    # Where to sign in the MCP way (RFC 9728): this endpoint's protected-resource metadata.
    metadata = f'resource_metadata="{live_server_proc.url}/.well-known/oauth-protected-resource/mcp"'
    assert metadata in challenge
    named = authorization is not None and authorization.startswith("Bearer")
    assert ('error="invalid_token"' in challenge) == named
    # The body says what the header says: an error code only where the header gives one.
    assert response.json().get("error") == ("invalid_token" if named else None)
    assert response.json()["error_description"]


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/api/questions"), ("POST", "/api/mcp-answer")],
)
async def test_the_json_api_refuses_a_missing_or_wrong_token(
    live_server_proc: LiveServer, method: str, path: str
) -> None:
    async with httpx2.AsyncClient(base_url=live_server_proc.url, timeout=60) as http:
        anonymous = await http.request(method, path, json={"questionId": "x", "answer": "y"})
        wrong = await http.request(method, path, headers={"Authorization": "Bearer nope"}, json={})
    assert anonymous.status_code == 401
    assert wrong.status_code == 401


async def test_an_anonymous_dashboard_visit_is_sent_to_log_in(live_server_proc: LiveServer) -> None:
    async with httpx2.AsyncClient(base_url=live_server_proc.url, timeout=60) as http:
        for path in ("/", "/history/"):
            response = await http.get(path)
            assert response.status_code == 302
            assert response.headers["location"].startswith("/accounts/login/")


async def test_an_anonymous_websocket_is_refused(live_server_proc: LiveServer) -> None:
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        async with live_server_proc.dashboard_socket():
            pass
    assert refused.value.response.status_code == 403


async def test_a_websocket_from_a_foreign_origin_is_refused(live_server_proc: LiveServer) -> None:
    async with live_server_proc.login() as browser:
        cookie = live_server_proc.cookie_header(browser)
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        async with websockets.connect(
            f"ws://127.0.0.1:{live_server_proc.port}/ws/dashboard/",
            additional_headers={"Cookie": cookie},
            origin=Origin("http://evil.example"),
        ):
            pass
    assert refused.value.response.status_code == 403


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("submit_lifecycle_event", {"event_type": "phase-exploded"}, "event_type"),
    ("submit_lifecycle_event", {}, "event_type"),
    ("submit_lifecycle_event", {"event_type": "task-started", "step": "3"}, "step"),
    ("submit_lifecycle_event", {"event_type": "task-started", "step": 5, "total_steps": 3}, "step"),
    ("ask_question", {}, "question"),
    ("ask_question", {"question": 42}, "question"),
    ("ask_question", {"question": ""}, "question"),
    ("ask_question", {"question": "Pick", "options": "yes,no"}, "options"),
    ("ask_question", {"question": "Pick", "options": [{"value": "a"}]}, "label"),
    ("ask_question", {"question": "Pick", "allow_free_text": "no"}, "allow_free_text"),
    ("ask_question", {"question": "Pick", "allow_free_text": False}, "allow_free_text"),
    (
        "ask_question",
        {"question": "Pick", "options": [{"value": "a", "label": "A"}, {"value": "a", "label": "B"}]},
        "options",
    ),
    ("ask_question", {"question": "x" * 20_001}, "question"),
    (
        "ask_question",
        {"question": "Pick", "options": [{"value": str(n), "label": str(n)} for n in range(21)]},
        "options",
    ),
    ("wait_for_answer", {"question_id": "not-an-id"}, "question_id"),
    # What a database column cannot hold (issue 17): PostgreSQL's integer is 32 bits, SQLite's 64.
    ("submit_lifecycle_event", {"event_type": "task-started", "step": 2**31}, "step"),
    ("submit_lifecycle_event", {"event_type": "task-started", "step": 10**30}, "step"),
    ("submit_lifecycle_event", {"event_type": "task-started", "phase_name": "a\x00b"}, "phase_name"),
    ("ask_question", {"question": "Nul\x00?"}, "question"),
    ("ask_question", {"question": "Pick", "options": [{"value": "a", "label": "A\x00"}]}, "options.0.label"),
]


@pytest.mark.parametrize(("tool", "arguments", "argument"), BAD_CALLS)
async def test_a_bad_argument_gets_an_error_naming_it_and_writes_nothing(
    live_server_proc: LiveServer, tool: str, arguments: dict[str, Any], argument: str
) -> None:
    async with live_server_proc.mcp("legacy") as client:
        before_questions = len(await live_server_proc.questions())
        before_status = (await client.call_tool("get_phase_status", {})).structured_content
        result = await client.call_tool(tool, arguments)
        after_status = (await client.call_tool("get_phase_status", {})).structured_content
    assert result.is_error
    assert argument in text_of(result)
    assert "Error executing tool" not in text_of(result)
    assert len(await live_server_proc.questions()) == before_questions
    assert before_status == after_status


async def test_an_oversized_body_is_refused(live_server_proc: LiveServer) -> None:
    headers = {**live_server_proc.auth(), **MCP_HEADERS}
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "' + b"x" * (2 * 1024 * 1024) + b'"}}'
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        response = await http.post(
            f"{live_server_proc.url}/mcp", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 413


async def test_lifecycle_events_and_phase_status_round_trip(live_server_proc: LiveServer) -> None:
    async with live_server_proc.mcp("2026-07-28") as client:
        recorded = await client.call_tool(
            "submit_lifecycle_event",
            {
                "event_type": "task-started",
                "phase_name": "Build",
                "phase_number": "2",
                "step": 3,
                "total_steps": 7,
            },
        )
        status = await client.call_tool("get_phase_status", {})
    assert recorded.structured_content == {"status": "ok"}
    assert status.structured_content is not None
    last = status.structured_content["lastLifecycleEvent"]
    assert (last["event_type"], last["phase_name"], last["phase_number"], last["step"], last["total_steps"]) == (
        "task-started",
        "Build",
        "2",
        3,
        7,
    )
    assert last["sent_by"] == "agent-a"
    assert isinstance(status.structured_content["pendingQuestions"], int)


@pytest.mark.parametrize(
    "headers",
    [{"Host": "evil.example"}, {"Origin": "http://evil.example"}],
    ids=["foreign host", "foreign origin"],
)
async def test_mcp_refuses_a_foreign_host_or_origin(live_server_proc: LiveServer, headers: dict[str, str]) -> None:
    """DNS-rebinding protection: a page on another site cannot drive a local server."""
    async with httpx2.AsyncClient(headers={**live_server_proc.auth(), **MCP_HEADERS, **headers}, timeout=60) as http:
        response = await http.post(f"{live_server_proc.url}/mcp", json=INITIALIZE)
    assert 400 <= response.status_code < 500
    assert response.status_code != 401


async def test_an_agent_token_cannot_answer_and_an_answering_token_cannot_call_tools(
    live_server_proc: LiveServer,
) -> None:
    async with httpx2.AsyncClient(base_url=live_server_proc.url, timeout=60) as http:
        answered = await http.post(
            "/api/mcp-answer", json={"questionId": "x", "answer": "y"}, headers=live_server_proc.auth("agent-a")
        )
        tools = await http.post("/mcp", json=INITIALIZE, headers={**live_server_proc.auth("answer-bot"), **MCP_HEADERS})
        listed = await http.get("/api/questions", headers=live_server_proc.auth("answer-bot"))
    assert answered.status_code == 403
    assert "scope 'answer'" in answered.json()["error"]
    assert tools.status_code == 403
    assert "scope 'agent'" in tools.json()["error"]["message"]
    assert listed.status_code == 200


@pytest.mark.parametrize("how", ["revoked", "expired"])
async def test_a_revoked_or_expired_token_is_refused_at_once(live_server_proc: LiveServer, how: str) -> None:
    name = f"short-lived-{how}"
    raw = live_server_proc.manage("create_token", name).strip().splitlines()[-1]
    headers = {"Authorization": f"Bearer {raw}", **MCP_HEADERS}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        assert (await http.post(f"{live_server_proc.url}/mcp", json=INITIALIZE)).status_code == 200
        # As the admin does it: the row is saved, and every server process forgets the token it cached.
        change = "t.revoke()" if how == "revoked" else "t.expires_at = timezone.now(); t.save()"
        live_server_proc.manage(
            "shell",
            "-c",
            "from django.utils import timezone; from tokens.models import AgentToken; "
            f"t = AgentToken.objects.get(name='{name}'); {change}",
        )
        assert (await http.post(f"{live_server_proc.url}/mcp", json=INITIALIZE)).status_code == 401
        assert (await http.get(f"{live_server_proc.url}/api/questions")).status_code == 401


async def test_a_token_asking_too_fast_gets_a_clear_error(rate_limited_server: LiveServer) -> None:
    async with rate_limited_server.mcp("legacy") as client:
        for n in range(2):
            held = await client.call_tool("ask_question", {"question": f"Allowed {n}?"})
            assert not held.is_error  # returned "still pending" after the short hold
        refused = await client.call_tool("ask_question", {"question": "One too many?"})
        again = await client.call_tool("ask_question", {"question": "Allowed 0?"})  # re-attaching still works
    assert refused.is_error
    assert "rate limit: at most 2 new questions a minute" in text_of(refused)
    assert not again.is_error
    assert "One too many?" not in [q["question"] for q in await rate_limited_server.questions()]


async def test_an_over_long_answer_is_refused_and_changes_nothing(live_server_proc: LiveServer) -> None:
    text = "How long may an answer be?"
    async with live_server_proc.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await live_server_proc.wait_for_question(text)
        too_long = await live_server_proc.answer_via_api(question["id"], "x" * 20_001)
        assert too_long.status_code == 400
        assert too_long.json()["field"] == "answer"
        assert (await live_server_proc.answer_via_api(question["id"], "short")).status_code == 200
        assert (await asyncio.wait_for(call, 30)).structured_content == {"answer": "short"}


# --- bodies that must not crash anything (issue 17) ---------------------------------------------------

DEEP = "[" * 1000 + "]" * 1000  # about 2 KB; Python's parser alone gives up near 1000 levels


async def test_deeply_nested_tool_arguments_get_a_parse_error_and_ask_nothing(live_server_proc: LiveServer) -> None:
    before = len(await live_server_proc.questions())
    body = '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "ask_question", "arguments": '
    body += '{"question": "Deep?", "options": ' + DEEP + "}}}"
    async with httpx2.AsyncClient(headers={**live_server_proc.auth(), **MCP_HEADERS}, timeout=60) as http:
        response = await http.post(
            f"{live_server_proc.url}/mcp", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32700
    assert "nested too deeply: at most 64 levels" in error["message"]
    assert len(await live_server_proc.questions()) == before
    assert "Traceback" not in live_server_proc.log()


# An answer may carry images (issue 29): its route takes the usual body and four of the largest, in base64.
ANSWER_LIMIT = 1024 * 1024 + 4 * (5 * 1024 * 1024 * 4 // 3 + 4)
LIMITS = {
    "/api/mcp-answer": (
        ANSWER_LIMIT,
        "HOOKBRIDGE_MAX_BODY_BYTES with HOOKBRIDGE_MAX_IMAGES times HOOKBRIDGE_MAX_IMAGE_BYTES",
    ),
    "/api/sessions": (1024 * 1024, "HOOKBRIDGE_MAX_BODY_BYTES"),
}


@pytest.mark.parametrize(("path", "scope"), [("/api/mcp-answer", "answer"), ("/api/sessions", "agent")])
async def test_the_json_api_refuses_deep_nan_and_oversized_bodies_as_json(
    live_server_proc: LiveServer, path: str, scope: str
) -> None:
    token = live_server_proc.tokens["answer-bot"] if scope == "answer" else live_server_proc.tokens["agent-a"]
    limit, named = LIMITS[path]
    huge = b'{"pad": "' + b"x" * (limit + 1024) + b'"}'

    async def chunks() -> Any:
        yield huge[:1000]
        yield huge[1000:]

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        deep = await http.post(f"{live_server_proc.url}{path}", content=DEEP)
        nan = await http.post(f"{live_server_proc.url}{path}", content='{"name": NaN}')
        sized = await http.post(f"{live_server_proc.url}{path}", content=huge)
        chunked = await http.post(f"{live_server_proc.url}{path}", content=chunks())  # no Content-Length
    assert (deep.status_code, deep.json()["field"]) == (400, "body")
    assert deep.json()["error"] == "body: is nested too deeply: at most 64 levels of arrays and objects"
    assert (nan.status_code, nan.json()["field"]) == (400, "name")
    assert nan.json()["error"] == "name: NaN is not a JSON number; send a finite number or null"
    for response in (sized, chunked):
        assert response.status_code == 413
        assert response.json() == {"error": f"body: is larger than {limit} bytes ({named})", "field": "body"}
    assert "Traceback" not in live_server_proc.log()


@pytest.mark.parametrize("request_id", ['{"a": 1}', "NaN", "1.5", "null", "[1]"])
async def test_a_request_with_an_invalid_id_gets_invalid_request(live_server_proc: LiveServer, request_id: str) -> None:
    body = '{"jsonrpc": "2.0", "id": ' + request_id + ', "method": "tools/list"}'
    async with httpx2.AsyncClient(headers={**live_server_proc.auth(), **MCP_HEADERS}, timeout=60) as http:
        response = await http.post(
            f"{live_server_proc.url}/mcp", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 400
    assert response.json()["id"] is None
    assert response.json()["error"]["code"] == -32600
    assert "id must be a string or an integer" in response.json()["error"]["message"]


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_get_and_delete_on_the_stateless_endpoint_answer_405_at_once(
    live_server_proc: LiveServer, method: str
) -> None:
    async with httpx2.AsyncClient(headers={**live_server_proc.auth(), **MCP_HEADERS}, timeout=60) as http:
        response = await http.request(method, f"{live_server_proc.url}/mcp")
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"
    assert response.json()["error"]["code"] == -32600


async def test_an_unpaired_surrogate_in_tool_arguments_is_refused_by_name(live_server_proc: LiveServer) -> None:
    body = (
        '{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "ask_question", '
        '"arguments": {"question": "Half a pair \\ud800?"}}}'
    )
    before = len(await live_server_proc.questions())
    headers = {**live_server_proc.auth(), **MCP_HEADERS, "MCP-Protocol-Version": "2025-11-25"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        response = await http.post(
            f"{live_server_proc.url}/mcp", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 200
    assert "arguments.question: must not contain an unpaired surrogate" in response.text
    assert len(await live_server_proc.questions()) == before


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_unknown_tool_is_a_protocol_error_listing_the_tools_here(
    live_server_proc: LiveServer, mode: str
) -> None:
    from mcp.shared.exceptions import MCPError

    async with live_server_proc.mcp(mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("no_such_tool", {})
    assert raised.value.error.code == -32602
    assert raised.value.error.message == (
        "Unknown tool: 'no_such_tool'; tools here: ask_question, get_phase_status, submit_lifecycle_event, "
        "wait_for_answer"
    )


@pytest.mark.parametrize(
    ("content_type", "body", "status", "code", "said"),
    [
        ("text/plain", b"{}", 415, -32600, "Content-Type: must be application/json, not text/plain"),
        (
            "application/json",
            b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]',
            400,
            -32600,
            "Invalid Request: a batch (a JSON array of messages) is not served",
        ),
        (
            "application/json",
            b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", '
            b'"params": {"name": "ask_question", "arguments": "x"}}',
            200,
            -32602,
            "Invalid params: arguments must be an object",
        ),
    ],
)
async def test_protocol_errors_are_json_rpc_naming_the_field(
    live_server_proc: LiveServer, content_type: str, body: bytes, status: int, code: int, said: str
) -> None:
    headers = {**MCP_HEADERS, **live_server_proc.auth(), "Content-Type": content_type}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        response = await http.post(f"{live_server_proc.url}/mcp", content=body)
        asked = await live_server_proc.questions()
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == code
    assert error["message"].startswith(said)
    assert "pydantic" not in response.text
    assert "validation error" not in response.text
    assert len(asked) == len(await live_server_proc.questions())
