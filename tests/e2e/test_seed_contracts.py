"""Each seed system's contract, exactly as the original documents it, over a real daphne process (issue 16).

MAXSIM's get_phase_status keeps the submitted snake_case names; Clifford's request_help
returns the bare reply as its text; the progress channel's send_status takes two arguments;
a single-set endpoint keeps its original's server name; prompt errors are -32602.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent
from mcp_types import SERVER_INFO_META_KEY

from testing.live import LiveServer, text_of
from testing.ts_client import ts_clients

INVALID_PARAMS = -32602


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_get_phase_status_returns_the_event_under_its_submitted_names(
    live_server_proc: LiveServer, mode: str
) -> None:
    phase_name = f"Hook Bridge ({mode})"
    async with live_server_proc.mcp(mode, token_name="agent-b") as client:
        await client.call_tool(
            "submit_lifecycle_event", {"event_type": "plan-started", "phase_name": phase_name, "phase_number": "33"}
        )
        status = await client.call_tool("get_phase_status", {})
    body = json.loads(text_of(status))
    assert body == status.structured_content
    assert isinstance(body["pendingQuestions"], int)
    last = body["lastLifecycleEvent"]
    # Exactly the submitted fields (step and total_steps were not), plus who and when in snake_case.
    assert set(last) == {"event_type", "phase_name", "phase_number", "sent_by", "created_at"}
    assert (last["event_type"], last["phase_name"], last["phase_number"], last["sent_by"]) == (
        "plan-started",
        phase_name,
        "33",
        "agent-b",
    )


async def test_get_phase_status_includes_steps_when_they_were_sent(live_server_proc: LiveServer) -> None:
    async with live_server_proc.mcp("2026-07-28", token_name="agent-b") as client:
        await client.call_tool(
            "submit_lifecycle_event",
            {"event_type": "task-started", "phase_name": "Build", "step": 3, "total_steps": 7},
        )
        status = await client.call_tool("get_phase_status", {})
    assert status.structured_content is not None
    last = status.structured_content["lastLifecycleEvent"]
    assert {key: last[key] for key in ("event_type", "phase_name", "step", "total_steps")} == {
        "event_type": "task-started",
        "phase_name": "Build",
        "step": 3,
        "total_steps": 7,
    }
    assert "phase_number" not in last
    assert not {"eventType", "phaseName", "totalSteps"} & set(last)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_request_help_returns_the_bare_reply_as_its_text(live_server_proc: LiveServer, mode: str) -> None:
    question = f"Where is the staging key? ({mode})"
    reply = 'In the vault, under "ci/staging" — ask Dana if it is locked.'
    async with live_server_proc.mcp(mode, path="/mcp/clifford") as client:
        call = asyncio.create_task(
            client.call_tool("request_help", {"task": "Deploy", "reason": "No key", "question": question})
        )
        pending = await live_server_proc.wait_for_question(question)
        response = await live_server_proc.answer_via_api(pending["id"], reply)
        assert response.status_code == 200, response.text
        result = await asyncio.wait_for(call, 30)
    assert not result.is_error
    assert [block.model_dump(exclude_none=True) for block in result.content] == [{"type": "text", "text": reply}]
    assert result.structured_content == {"answer": reply}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_send_status_takes_two_arguments(live_server_proc: LiveServer, mode: str) -> None:
    guid = await live_server_proc.open_session(name=f"two-argument status ({mode})")
    async with live_server_proc.mcp(mode, path="/mcp/progress") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool("send_status", {"guid": guid, "message": "Reading the code"})
        with_phase = await client.call_tool(
            "send_status", {"guid": guid, "message": "Writing it", "phase": "implementing"}
        )
        bad_phase = await client.call_tool("send_status", {"guid": guid, "message": "zzz", "phase": "sleeping"})
    assert listed["send_status"].input_schema["required"] == ["guid", "message"]
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    event = result.structured_content["event"]
    assert (event["type"], event["message"]) == ("status", "Reading the code")
    assert "phase" not in event
    assert not with_phase.is_error
    assert bad_phase.is_error
    assert "phase" in text_of(bad_phase)
    state = (await live_server_proc.session_state(guid)).json()
    assert state["status"] == {"message": "Writing it", "phase": "implementing"}


async def test_a_status_without_a_phase_shows_on_the_session_page(live_server_proc: LiveServer) -> None:
    guid = await live_server_proc.open_session(name="status without a phase")
    async with live_server_proc.mcp("2026-07-28", path="/mcp/progress") as client:
        await client.call_tool("send_status", {"guid": guid, "message": "Reading the migrations"})
    state = (await live_server_proc.session_state(guid)).json()
    assert state["status"] == {"message": "Reading the migrations", "phase": None}
    async with live_server_proc.login() as browser:
        page = await browser.get(f"/sessions/{guid}/")
    assert page.status_code == 200
    assert "Reading the migrations" in page.text


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/mcp/clifford", "clifford"),
        ("/mcp/hooks", "han"),
        ("/mcp", "hookbridge"),
        ("/mcp/askme", "hookbridge"),
        ("/mcp/askme+clifford", "hookbridge"),
    ],
)
async def test_an_endpoint_introduces_itself_with_its_originals_name(
    live_server_proc: LiveServer, path: str, name: str, mode: str
) -> None:
    async with live_server_proc.mcp(mode, path=path) as client:
        listed = await client.list_tools()
        info = client.server_info
    if mode == "legacy":
        assert info is not None
        assert info.name == name
    else:
        # The 2026 era has no handshake: every result carries the server's name in its _meta.
        assert listed.meta is not None
        assert listed.meta[SERVER_INFO_META_KEY]["name"] == name


# --- prompts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize(
    ("name", "arguments", "names"),
    [
        ("no-such-prompt", {}, "no-such-prompt"),
        (
            "suggest-follow-up-questions",
            {"originalQuestion": "Which DB?", "response": "Postgres", "responseType": "essay"},
            "responseType",
        ),
        ("human-decision", {"context": "Outage", "options": "a; b", "urgency": "tomorrow"}, "urgency"),
        ("suggest-follow-up-questions", {"originalQuestion": "Which DB?"}, "response"),
        ("creative-brainstorm", {"challenge": "Name it", "idea_count": "many"}, "idea_count"),
    ],
    ids=["unknown prompt", "responseType outside its enum", "urgency outside its enum", "missing", "not a number"],
)
async def test_a_prompt_error_is_invalid_params_naming_the_problem(
    live_server_proc: LiveServer, mode: str, name: str, arguments: dict[str, str], names: str
) -> None:
    async with live_server_proc.mcp(mode, path="/mcp/askme") as client:
        with pytest.raises(MCPError) as refused:
            await client.get_prompt(name, arguments)
    assert refused.value.code == INVALID_PARAMS
    assert names in refused.value.error.message


async def test_suggest_follow_up_questions_asks_for_prioritised_questions_and_a_summary(
    live_server_proc: LiveServer,
) -> None:
    arguments = {"originalQuestion": "Which DB?", "response": "Postgres, probably", "responseType": "multiple-choice"}
    async with live_server_proc.mcp("2026-07-28", path="/mcp/askme") as client:
        result = await client.get_prompt("suggest-follow-up-questions", arguments)
    content = result.messages[0].content
    assert isinstance(content, TextContent)
    text: str = content.text
    for needle in ("3 to 5", "High, Medium or Low", "Reasoning", "Question type", "Analysis summary"):
        assert needle in text
    assert "ask-multiple-choice" in text


async def test_the_typescript_sdk_gets_clifford_by_name_and_the_bare_reply_while_progress_resets_its_timeout(
    live_server_proc: LiveServer,
) -> None:
    """As hosts embed it: a 3 s timeout kept alive by progress, the reply held until a person answers."""
    question = "Which bucket holds the fixtures? (TypeScript SDK)"
    reply = "s3://team-fixtures, read-only"
    async with ts_clients() as ts:
        connected = await ts.connect("host", f"{live_server_proc.url}/mcp/clifford", live_server_proc.tokens["agent-a"])
        arguments = {"task": "Load fixtures", "reason": "No bucket name", "question": question}
        await ts.call(
            "host", "help", "request_help", arguments, timeout=3000, resetTimeoutOnProgress=True, progress=True
        )
        pending = await live_server_proc.wait_for_question(question)
        await asyncio.sleep(4)  # past the client's own timeout: progress kept the call alive
        assert (await live_server_proc.answer_via_api(pending["id"], reply)).status_code == 200
        outcome = await ts.outcome("help")
    assert connected["server"]["name"] == "clifford"
    assert outcome["event"] == "result", outcome
    assert outcome["result"]["content"] == [{"type": "text", "text": reply}]
    assert outcome["result"]["structuredContent"] == {"answer": reply}
