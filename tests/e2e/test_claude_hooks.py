"""Claude Code's HTTP hooks against a real daphne process, with the bodies Claude Code 2.1.330 sent.

The fixtures in tests/fixtures/claude_code_hooks/ are those bodies as captured (paths rewritten).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from testing.live import LiveServer, sqlite_at, text_of

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "claude_code_hooks"
APPROVAL_TIMEOUT = 4.0


def body(event: str, **changes: Any) -> dict[str, Any]:
    """A captured body, in a session of its own unless `session_id` is given."""
    data: dict[str, Any] = json.loads((FIXTURES / f"{event}.json").read_text())
    data["session_id"] = str(uuid.uuid4())
    data.update(changes)
    return data


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    live = LiveServer(env_overrides={"HOOKBRIDGE_APPROVAL_TIMEOUT": str(APPROVAL_TIMEOUT)})
    live.setup()
    try:
        yield live
    finally:
        live.close()


def rows(server: LiveServer, sql: str, *args: object) -> list[tuple[Any, ...]]:
    with sqlite_at(server.tmp / "db.sqlite3") as db:
        return db.execute(sql, args).fetchall()


def counts(server: LiveServer) -> dict[str, int]:
    tables = ["lifecycle_agentsession", "lifecycle_sessionevent", "questions_question", "questions_answer"]
    return {table: rows(server, f"SELECT COUNT(*) FROM {table}")[0][0] for table in tables}


def events_of(server: LiveServer, session_id: str) -> list[tuple[str, dict[str, Any]]]:
    found = rows(
        server,
        "SELECT type, data FROM lifecycle_sessionevent WHERE session_id = ? ORDER BY id",
        uuid.UUID(session_id).hex,
    )
    return [(kind, json.loads(data)) for kind, data in found]


async def hook(
    server: LiveServer, payload: Any, *, token: str = "agent-a", query: str = "", timeout: float = 15
) -> httpx2.Response:
    async with httpx2.AsyncClient(headers=server.auth(token), timeout=timeout) as http:
        if isinstance(payload, bytes):
            return await http.post(f"{server.url}/hooks/claude{query}", content=payload)
        return await http.post(f"{server.url}/hooks/claude{query}", json=payload)


async def pending_approval(server: LiveServer, session_id: str, timeout: float = 10) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for question in await server.questions(status="pending"):
            if question["kind"] == "approval" and question["payload"].get("session_id") == session_id:
                return question
        await asyncio.sleep(0.05)
    raise AssertionError(f"no approval appeared for session {session_id}:\n{server.log()[-3000:]}")


async def add_rule(server: LiveServer, **fields: object) -> None:
    server.manage(
        "shell", "-c", f"from approvals.models import ApprovalRule; ApprovalRule.objects.create(**{fields!r})"
    )
    await asyncio.sleep(1.2)  # the server re-reads rules a second after its last read


@pytest.mark.parametrize(
    ("event", "kind", "expected"),
    [
        ("UserPromptSubmit", "prompt", {"prompt": "make hi.txt", "promptSize": 11}),
        ("PreToolUse", "tool", {"hook": "PreToolUse", "tool": "Bash", "summary": "Bash: touch hi.txt && echo hi"}),
        (
            "PostToolUse",
            "tool",
            {"hook": "PostToolUse", "durationMs": 48, "outcome": "ok", "toolUseId": "toolu_fake_0"},
        ),
        ("Stop", "stop", {"lastMessage": "Done: got the tool result.", "stopHookActive": False}),
        ("SessionEnd", "end", {"reason": "other"}),
    ],
)
async def test_it_records_each_event_the_host_sends(
    server: LiveServer, event: str, kind: str, expected: dict[str, Any]
) -> None:
    sent = body(event)
    response = await hook(server, sent)
    assert response.status_code == 200, response.text
    assert response.json() == {}
    recorded = events_of(server, sent["session_id"])
    assert [k for k, _ in recorded] == [kind]
    assert expected.items() <= recorded[0][1].items()
    state = await server.session_state(sent["session_id"])
    assert state.status_code == 200
    assert state.json()["project"] == "shop"
    assert state.json()["closedAt"] is not None if event == "SessionEnd" else state.json()["closedAt"] is None


async def test_a_session_shows_what_its_agent_is_doing(server: LiveServer) -> None:
    sent = body("PreToolUse", tool_input={"command": "npm test"})
    await hook(server, sent)
    state = (await server.session_state(sent["session_id"])).json()
    assert state["status"]["message"] == "running Bash: npm test"
    assert state["guid"] == sent["session_id"]


async def test_it_records_an_unknown_event_as_sent(server: LiveServer) -> None:
    sent = body("Stop", hook_event_name="SomethingNew", brand_new_field={"x": [1, 2]})
    response = await hook(server, sent)
    assert response.status_code == 200
    [(kind, data)] = events_of(server, sent["session_id"])
    assert kind == "hook"
    assert data["hook"] == "SomethingNew"
    assert '"brand_new_field": {"x": [1, 2]}' in data["body"]


async def test_it_stores_a_large_tool_response_bounded_with_its_size(server: LiveServer) -> None:
    sent = body("PostToolUse", tool_response={"stdout": "x" * 50_000, "stderr": "", "interrupted": False})
    assert (await hook(server, sent)).status_code == 200
    [(_, data)] = events_of(server, sent["session_id"])
    assert len(data["response"]) == 4000
    assert data["responseSize"] > 50_000


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        (b"{not json", "body"),
        (b"[1, 2]", "body"),
        (json.dumps({"session_id": "s"}).encode(), "hook_event_name"),
        (json.dumps({"hook_event_name": "Stop"}).encode(), "session_id"),
        (json.dumps({"hook_event_name": "Stop", "session_id": "s", "tool_input": "rm"}).encode(), "tool_input"),
        (
            json.dumps({"hook_event_name": "Stop", "session_id": "s", "stop_hook_active": "yes"}).encode(),
            "stop_hook_active",
        ),
        (b'{"hook_event_name": "Stop", "session_id": "s", "prompt": "\\u0000"}', "prompt"),
    ],
)
async def test_it_refuses_a_malformed_body_naming_the_field_and_writes_nothing(
    server: LiveServer, payload: bytes, field: str
) -> None:
    before = counts(server)
    response = await hook(server, payload)
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert field in response.json()["error"]
    assert counts(server) == before


async def test_it_refuses_a_bad_token_and_writes_nothing(server: LiveServer) -> None:
    before = counts(server)
    async with httpx2.AsyncClient(headers={"Authorization": "Bearer not-a-token"}, timeout=60) as http:
        response = await http.post(f"{server.url}/hooks/claude", json=body("Stop"))
    assert response.status_code == 401
    async with httpx2.AsyncClient(timeout=60) as http:
        assert (await http.post(f"{server.url}/hooks/claude", json=body("Stop"))).status_code == 401
    assert (await hook(server, body("Stop"), token="answer-bot")).status_code == 403
    assert counts(server) == before


async def test_another_tokens_session_is_refused(server: LiveServer) -> None:
    sent = body("Stop")
    assert (await hook(server, sent)).status_code == 200
    response = await hook(server, sent, token="agent-b")
    assert response.status_code == 409
    assert response.json()["field"] == "session_id"


@pytest.mark.parametrize(
    ("answer", "decision"),
    [
        ({"behavior": "allow"}, {"behavior": "allow"}),
        (
            {"behavior": "allow", "updatedInput": {"command": "touch hello.txt"}},
            {"behavior": "allow", "updatedInput": {"command": "touch hello.txt"}},
        ),
        ({"behavior": "deny", "message": "Not in this repo"}, {"behavior": "deny", "message": "Not in this repo"}),
        (
            {"behavior": "allow", "suggestion": 1},
            {
                "behavior": "allow",
                "updatedPermissions": [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}],
            },
        ),
    ],
)
async def test_a_permission_request_waits_for_a_person_and_returns_their_decision(
    server: LiveServer, answer: dict[str, Any], decision: dict[str, Any]
) -> None:
    sent = body("PermissionRequest")
    request = asyncio.ensure_future(hook(server, sent))
    approval = await pending_approval(server, sent["session_id"])
    assert not request.done()
    assert approval["payload"]["tool_input"] == sent["tool_input"]
    answered = await server.answer_via_api(approval["id"], answer)
    assert answered.status_code == 200, answered.text
    response = await asyncio.wait_for(request, 30)
    assert response.json() == {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}
    # The decision goes to the host first; its line in the session's history is written just after.
    for _ in range(40):
        recorded = events_of(server, sent["session_id"])
        if len(recorded) == 2:
            break
        await asyncio.sleep(0.05)
    assert [kind for kind, _ in recorded] == ["approval", "approval"]
    decided = recorded[-1][1]
    assert decided["decision"] == decision["behavior"]
    assert decided["by"] == "answer-bot"
    assert decided["waitedMs"] >= 0


async def test_an_approval_refuses_a_malformed_decision_naming_the_field(server: LiveServer) -> None:
    sent = body("PermissionRequest")
    request = asyncio.ensure_future(hook(server, sent))
    approval = await pending_approval(server, sent["session_id"])
    for answer, field in [
        ({"behavior": "maybe"}, "behavior"),
        ({"behavior": "allow", "updatedInput": "rm -rf /"}, "updatedInput"),
        ({"behavior": "allow", "suggestion": 7}, "suggestion"),
        ({"behavior": "allow", "updatedPermissions": [{"type": "addRules", "rules": []}]}, "updatedPermissions"),
    ]:
        refused = await server.answer_via_api(approval["id"], answer)
        assert refused.status_code == 400
        assert refused.json()["field"] == field
    assert not request.done()
    await server.answer_via_api(approval["id"], {"behavior": "allow"})
    assert (await asyncio.wait_for(request, 30)).status_code == 200


async def test_a_routed_pre_tool_use_gets_a_permission_decision(server: LiveServer) -> None:
    sent = body("PreToolUse")
    request = asyncio.ensure_future(hook(server, sent, query="?approve=1"))
    approval = await pending_approval(server, sent["session_id"])
    await server.answer_via_api(approval["id"], {"behavior": "deny", "message": "Use the Makefile"})
    response = await asyncio.wait_for(request, 30)
    assert response.json() == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "Use the Makefile",
        }
    }


async def test_the_host_leaving_takes_the_card_away(server: LiveServer) -> None:
    sent = body("PermissionRequest")
    request = asyncio.ensure_future(hook(server, sent))
    approval = await pending_approval(server, sent["session_id"])
    request.cancel()  # the connection closes: the person answered at the terminal, Esc, or the hook timed out
    # How soon is a benchmark's to measure; here only that it happens (a slow machine is not a bug).
    left = time.monotonic()
    while time.monotonic() - left < 30:
        now = {q["id"]: q for q in await server.questions()}[approval["id"]]
        if now["status"] != "pending":
            break
        await asyncio.sleep(0.05)
    assert now["status"] == "cancelled", f"still {now['status']} after 30 s"
    assert now["cancelReason"] == "host_decided"
    refused = await server.answer_via_api(approval["id"], {"behavior": "allow"})
    assert refused.status_code == 409


async def test_a_tool_that_ran_on_a_decision_at_the_terminal_takes_its_card_away_though_the_request_stays_open(
    server: LiveServer,
) -> None:
    # Claude Code's terminal UI: a "Yes" at its own prompt runs the tool and leaves the hook's request open.
    sent = body("PermissionRequest")
    request = asyncio.ensure_future(hook(server, sent))
    approval = await pending_approval(server, sent["session_id"])
    other = body("PostToolUse", session_id=sent["session_id"], tool_input={"command": "ls"})
    assert (await hook(server, other)).json() == {}
    assert {q["id"]: q for q in await server.questions()}[approval["id"]]["status"] == "pending", (
        "another tool use ran: this one still waits"
    )
    ran = body("PostToolUse", session_id=sent["session_id"], tool_name=sent["tool_name"], tool_input=sent["tool_input"])
    assert (await hook(server, ran)).json() == {}
    now = {q["id"]: q for q in await server.questions()}[approval["id"]]
    assert (now["status"], now["cancelReason"]) == ("cancelled", "host_decided")
    response = await asyncio.wait_for(request, 30)
    assert response.json() == {}, "the held request is let go with no decision, which the host no longer reads"
    for _ in range(40):  # the approval's line in the session's history is written once its request is let go
        recorded = events_of(server, sent["session_id"])
        if [kind for kind, _ in recorded].count("approval") == 2:
            break
        await asyncio.sleep(0.05)
    assert recorded[-1][1]["decision"] == "none"
    async with httpx2.AsyncClient(headers=server.auth("agent-a"), timeout=60) as http:
        session = (await http.get(f"{server.url}/api/sessions/{sent['session_id']}")).json()
    assert session["status"]["message"].startswith("ran Bash"), "the agent has moved on: its status says so"
    refused = await server.answer_via_api(approval["id"], {"behavior": "allow"})
    assert refused.status_code == 409


async def test_a_new_prompt_leaves_claude_codes_waiting_approval_waiting(server: LiveServer) -> None:
    # Its Esc closes the hook's request itself; a prompt typed meanwhile is no sign the approval was left behind.
    sent = body("PermissionRequest")
    request = asyncio.ensure_future(hook(server, sent))
    approval = await pending_approval(server, sent["session_id"])
    assert (await hook(server, body("UserPromptSubmit", session_id=sent["session_id"]))).json() == {}
    assert {q["id"]: q for q in await server.questions()}[approval["id"]]["status"] == "pending"
    assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
    assert (await asyncio.wait_for(request, 30)).json()["hookSpecificOutput"]["decision"] == {"behavior": "allow"}


async def test_the_server_says_no_decision_when_its_hold_runs_out(server: LiveServer) -> None:
    # That it answers before the host's own timeout is the setting's to say (590 s against 600); how soon, a
    # benchmark's. Here: it held the request for its hold, then said "no decision".
    sent = body("PermissionRequest", tool_input={"command": "sleep 1"})
    started = time.monotonic()
    response = await hook(server, sent, timeout=APPROVAL_TIMEOUT + 60)
    waited = time.monotonic() - started
    assert response.json() == {}
    assert waited >= APPROVAL_TIMEOUT - 0.5
    [timed_out] = [q for q in await server.questions() if q["payload"].get("session_id") == sent["session_id"]]
    assert timed_out["status"] == "timed_out"


async def test_a_team_rule_decides_at_once_without_a_card(server: LiveServer) -> None:
    await add_rule(server, tool_pattern="Bash", input_pattern="^npm (test|run lint)$", action="allow", position=1)
    await add_rule(
        server, tool_pattern="Bash", input_pattern="rm -rf", action="deny", message="Never rm -rf here", position=2
    )
    allowed = body("PermissionRequest", tool_input={"command": "npm test"})
    response = await hook(server, allowed)
    assert response.json() == {
        "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}
    }
    denied = body("PermissionRequest", tool_input={"command": "rm -rf build"})
    response = await hook(server, denied)
    assert response.json()["hookSpecificOutput"]["decision"] == {"behavior": "deny", "message": "Never rm -rf here"}
    # A deny rule guards a PreToolUse that is not routed for approval; an allow rule does not skip the host's checks.
    guarded = await hook(server, body("PreToolUse", tool_input={"command": "rm -rf /"}))
    assert guarded.json()["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert (await hook(server, body("PreToolUse", tool_input={"command": "npm test"}))).json() == {}
    # Kept in history: answered by the rule, never pending, with the time the rule took.
    await asyncio.sleep(0.5)
    decided = [q for q in await server.questions() if q["payload"].get("session_id") == allowed["session_id"]]
    assert [q["status"] for q in decided] == ["answered"]
    assert decided[0]["answer"]["answeredBy"].startswith("rule #")
    # Its wait in history is the rule's own time, not the write that came after the answer.
    rule_us = decided[0]["payload"]["decided_in_us"]
    assert abs(decided[0]["answer"]["secondsToAnswer"] * 1e6 - rule_us) <= 1000
    server.manage("shell", "-c", "from approvals.models import ApprovalRule; ApprovalRule.objects.all().delete()")
    await asyncio.sleep(1.2)


async def message_on_page(server: LiveServer, guid: str, text: str) -> httpx2.Response:
    async with server.login() as http:
        return await http.post(f"/sessions/{guid}/messages", data={"text": text}, headers={"HX-Request": "true"})


async def test_a_message_from_the_session_page_reaches_the_next_post_tool_use_once(server: LiveServer) -> None:
    start = body("UserPromptSubmit")
    sid = start["session_id"]
    await hook(server, start)
    sent = await message_on_page(server, sid, "Use pnpm, not npm")
    assert sent.status_code == 200, sent.text
    first = await hook(server, body("PostToolUse", session_id=sid))
    context = first.json()["hookSpecificOutput"]
    assert context["hookEventName"] == "PostToolUse"
    assert context["additionalContext"] == "alice (on Hook Bridge) says: Use pnpm, not npm"
    again = await hook(server, body("PostToolUse", session_id=sid))
    assert again.json() == {}
    assert rows(server, "SELECT delivered_via FROM lifecycle_sessionmessage WHERE text = ?", "Use pnpm, not npm") == [
        ("PostToolUse",)
    ]


async def test_a_message_reaches_a_stop_as_a_block_but_never_a_stop_hook_continuation(server: LiveServer) -> None:
    start = body("UserPromptSubmit")
    sid = start["session_id"]
    await hook(server, start)
    await message_on_page(server, sid, "Also update the changelog")
    looping = await hook(server, body("Stop", session_id=sid, stop_hook_active=True))
    assert looping.json() == {}
    stop = await hook(server, body("Stop", session_id=sid))
    assert stop.json() == {"decision": "block", "reason": "alice (on Hook Bridge) says: Also update the changelog"}
    assert (await hook(server, body("Stop", session_id=sid))).json() == {}


async def test_an_empty_message_is_refused_on_the_page(server: LiveServer) -> None:
    start = body("UserPromptSubmit")
    await hook(server, start)
    refused = await message_on_page(server, start["session_id"], "   ")
    assert refused.status_code == 422
    assert "Write the message first." in refused.text


async def test_an_answer_that_came_after_the_agent_stopped_waiting_is_delivered_at_its_next_hook(
    server: LiveServer,
) -> None:
    start = body("UserPromptSubmit")
    sid = start["session_id"]
    await hook(server, start)  # the token's newest session: its questions belong to it
    text = f"Which database? {uuid.uuid4()}"
    async with server.mcp(mode="legacy", read_timeout_seconds=1.0) as client:
        with pytest.raises(MCPError):
            await client.call_tool("ask_question", {"question": text}, read_timeout_seconds=1.0)
    question = await server.wait_for_question(text)
    for _ in range(50):  # the server notes that the call ended
        if not (await server.wait_for_question(text))["agentWaiting"]:
            break
        await asyncio.sleep(0.1)
    assert (await server.answer_via_api(question["id"], "PostgreSQL")).status_code == 200
    first = await hook(server, body("PostToolUse", session_id=sid))
    said = first.json()["hookSpecificOutput"]["additionalContext"]
    assert said == f"While you worked, answer-bot answered your question '{text}': PostgreSQL"
    assert (await hook(server, body("Stop", session_id=sid))).json() == {}


async def test_the_permission_prompt_tool_returns_the_decision_as_json_text(server: LiveServer) -> None:
    call = json.loads((FIXTURES / "permission-prompt-tool.call.json").read_text())["params"]["arguments"]
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"behavior": "allow"}, {"behavior": "allow", "updatedInput": call["input"]}),
        (
            {"behavior": "allow", "updatedInput": {"command": "echo hi"}},
            {"behavior": "allow", "updatedInput": {"command": "echo hi"}},
        ),
        ({"behavior": "deny", "message": "No"}, {"behavior": "deny", "message": "No"}),
    ]
    for answer, expected in cases:
        arguments = {**call, "input": {**call["input"], "nonce": str(uuid.uuid4())}}
        if answer.get("behavior") == "allow" and "updatedInput" not in answer:
            expected = {"behavior": "allow", "updatedInput": arguments["input"]}
        async with server.mcp(mode="legacy", path="/mcp/approvals") as client:
            calling = asyncio.ensure_future(client.call_tool("approve", arguments))
            deadline = time.monotonic() + 30
            approval = None
            while approval is None and time.monotonic() < deadline:
                approval = next(
                    (
                        q
                        for q in await server.questions("pending")
                        if q["payload"].get("tool_input") == arguments["input"]
                    ),
                    None,
                )
                await asyncio.sleep(0.05)
            assert approval is not None
            assert approval["kind"] == "approval"
            await server.answer_via_api(approval["id"], answer)
            result = await asyncio.wait_for(calling, 30)
        assert json.loads(text_of(result)) == expected
        # Claude Code refuses anything but one text block ("Expected a single text block …").
        assert [block.type for block in result.content] == ["text"]
        assert result.structured_content is None


async def test_the_typescript_sdk_waits_past_its_timeout_for_an_approval_and_an_abort_withdraws_it(
    live_server_proc: LiveServer,
) -> None:
    """As a headless host embeds it: a 2 s timeout reset by progress, then an Esc-style abort of a second call."""
    from testing.ts_client import ts_clients

    async def approval_for(command: str) -> dict[str, Any]:
        for _ in range(200):
            for question in await live_server_proc.questions():
                if question["kind"] == "approval" and question["payload"]["tool_input"].get("command") == command:
                    return question
            await asyncio.sleep(0.05)
        raise AssertionError(f"no approval for {command}")

    async with ts_clients() as ts:
        await ts.connect("host", f"{live_server_proc.url}/mcp/approvals", live_server_proc.tokens["agent-a"])
        options = {"timeout": 2000, "resetTimeoutOnProgress": True, "progress": True}
        edited_from = {"command": f"npm test -- {uuid.uuid4()}"}
        await ts.call(
            "host", "ok", "approve", {"tool_name": "Bash", "input": edited_from, "tool_use_id": "toolu_1"}, **options
        )
        approval = await approval_for(edited_from["command"])
        await asyncio.sleep(3)  # past the client's own timeout: progress kept the call alive
        await live_server_proc.answer_via_api(
            approval["id"], {"behavior": "allow", "updatedInput": {"command": "npm test"}}
        )
        outcome = await ts.outcome("ok")
        assert outcome["event"] == "result", outcome
        assert json.loads(outcome["result"]["content"][0]["text"]) == {
            "behavior": "allow",
            "updatedInput": {"command": "npm test"},
        }
        aborted = {"command": f"rm -rf {uuid.uuid4()}"}
        await ts.call("host", "esc", "approve", {"tool_name": "Bash", "input": aborted}, **options)
        approval = await approval_for(aborted["command"])
        await ts.send(op="abort", call="esc")
        assert (await ts.outcome("esc"))["event"] == "error"
    # The server hears of the abort when the call's stream closes: on a loaded machine that took more than the
    # two seconds this once allowed (CI, 2026-12-02), so wait on a deadline; the outcome is what is asserted.
    deadline = time.monotonic() + 30
    now = await approval_for(aborted["command"])
    while now["status"] == "pending" and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        now = await approval_for(aborted["command"])
    assert (now["status"], now.get("cancelReason")) == ("cancelled", "client_cancelled"), now


async def test_a_program_steers_a_session_through_the_api_exactly_as_from_the_page(server: LiveServer) -> None:
    start = body("UserPromptSubmit")
    sid = start["session_id"]
    await hook(server, start)
    async with httpx2.AsyncClient(base_url=server.url, headers=server.auth("answer-bot"), timeout=60) as bot:
        sent = await bot.post(f"/api/sessions/{sid}/messages", json={"text": "Run the slow tests too"})
        empty = await bot.post(f"/api/sessions/{sid}/messages", json={"text": "  "})
    assert sent.status_code == 201, sent.text
    assert sent.json()["sentBy"] == "answer-bot"
    assert (empty.status_code, empty.json()["field"]) == (400, "text")
    async with httpx2.AsyncClient(base_url=server.url, headers=server.auth("agent-a"), timeout=60) as agent:
        # An agent's token may not steer (answer scope), and another agent's session is not there for it.
        refused = await agent.post(f"/api/sessions/{sid}/messages", json={"text": "x"})
    assert refused.status_code == 403
    first = await hook(server, body("PostToolUse", session_id=sid))
    assert (
        first.json()["hookSpecificOutput"]["additionalContext"]
        == "answer-bot (on Hook Bridge) says: Run the slow tests too"
    )
    assert (await hook(server, body("PostToolUse", session_id=sid))).json() == {}


async def test_a_sessions_events_are_read_newest_first_a_page_at_a_time(server: LiveServer) -> None:
    start = body("UserPromptSubmit")
    sid = start["session_id"]
    await hook(server, start)
    for _ in range(4):
        await hook(server, body("PostToolUse", session_id=sid))
    async with httpx2.AsyncClient(base_url=server.url, headers=server.auth("answer-bot"), timeout=60) as bot:
        first = (await bot.get(f"/api/sessions/{sid}", params={"events_limit": "3"})).json()
        rest = (await bot.get(first["eventsNext"])).json()
        bad = await bot.get(f"/api/sessions/{sid}", params={"events_limit": "0"})
    ids = [event["id"] for event in first["events"] + rest["events"]]
    assert len(ids) == 5
    assert ids == sorted(ids, reverse=True)
    assert {event["guid"] for event in first["events"] + rest["events"]} == {sid}
    assert rest["eventsNext"] is None
    assert (bad.status_code, bad.json()["field"]) == (400, "events_limit")


async def test_nobody_deciding_defers_claude_codes_run_and_its_resumed_run_gets_the_later_decision(
    server: LiveServer,
) -> None:
    # Claude Code's `defer` (honoured in `claude -p`): the run stops on the tool call; the approval stays up, and
    # the same tool use in the resumed run finds the decision made meanwhile.
    sent = body("PreToolUse", tool_input={"command": f"make release-{uuid.uuid4().hex[:6]}"})
    deferred = await hook(server, sent, query="?approve=1", timeout=APPROVAL_TIMEOUT + 60)
    assert deferred.json()["hookSpecificOutput"]["permissionDecision"] == "defer"
    [waiting] = [q for q in await server.questions("pending") if q["payload"].get("session_id") == sent["session_id"]]
    assert waiting["agentLeftReason"].startswith("deferred: ")
    assert (await server.answer_via_api(waiting["id"], {"behavior": "allow"})).status_code == 200
    resumed = await hook(server, sent, query="?approve=1", timeout=30)
    output = resumed.json()["hookSpecificOutput"]
    assert (output["permissionDecision"], output["permissionDecisionReason"]) == (
        "allow",
        "Allowed by answer-bot on Hook Bridge",
    )
