"""Tool sets chosen by URL, and the Ask-Me prompts, over real HTTP."""

from __future__ import annotations

import httpx2
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent

from testing.live import LiveServer

MAXSIM = {"ask_question", "wait_for_answer", "submit_lifecycle_event", "get_phase_status"}
ASKME = {"ask-one-question", "ask-multiple-choice", "challenge-hypothesis", "choose-next"}
CLIFFORD = {"request_help"}
PROMPTS = {"suggest-follow-up-questions", "human-decision", "expert-consultation", "creative-brainstorm"}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/mcp", MAXSIM),
        ("/mcp/maxsim", MAXSIM),
        ("/mcp/askme", ASKME),
        ("/mcp/clifford", CLIFFORD),
        ("/mcp/askme+clifford", ASKME | CLIFFORD),
        ("/mcp/clifford+askme", ASKME | CLIFFORD),
        ("/mcp/askme+clifford+maxsim", ASKME | CLIFFORD | MAXSIM),
    ],
)
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_each_path_lists_exactly_its_tool_sets(
    live_server_proc: LiveServer, path: str, expected: set[str], mode: str
) -> None:
    async with live_server_proc.mcp(mode, path=path) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
    assert tools == expected


async def test_an_unknown_tool_set_gets_a_404_listing_the_known_ones(live_server_proc: LiveServer) -> None:
    async with httpx2.AsyncClient(headers=live_server_proc.auth(), timeout=60) as http:
        response = await http.post(f"{live_server_proc.url}/mcp/askme+nonsense", json={})
    assert response.status_code == 404
    body = response.json()
    assert "nonsense" in body["error"]
    assert body["knownToolsets"] == ["maxsim", "askme", "clifford", "progress", "hooks", "approvals"]


async def test_the_askme_prompts_are_listed_with_their_arguments(live_server_proc: LiveServer) -> None:
    async with live_server_proc.mcp("legacy", path="/mcp/askme") as client:
        prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
    assert set(prompts) == PROMPTS
    required = {name: {a.name for a in p.arguments or [] if a.required} for name, p in prompts.items()}
    assert required == {
        "suggest-follow-up-questions": {"originalQuestion", "response"},
        "human-decision": {"context", "options"},
        "expert-consultation": {"topic", "expertise_area"},
        "creative-brainstorm": {"challenge"},
    }
    optional = {a.name for a in prompts["creative-brainstorm"].arguments or [] if not a.required}
    assert optional == {"goal", "constraints", "target_audience", "inspiration_sources", "idea_count"}


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        (
            "suggest-follow-up-questions",
            {"originalQuestion": "Which DB?", "response": "Postgres", "responseType": "open"},
            ["Which DB?", "Postgres", "ask-one-question"],
        ),
        ("human-decision", {"context": "Outage", "options": "roll back; fix forward", "urgency": "high"}, ["Outage"]),
        ("expert-consultation", {"topic": "TLS", "expertise_area": "security"}, ["security", "TLS"]),
        ("creative-brainstorm", {"challenge": "Name the app", "idea_count": "5"}, ["5 distinct ideas", "Name the app"]),
    ],
)
async def test_a_prompt_returns_a_useful_text(
    live_server_proc: LiveServer, name: str, arguments: dict[str, str], expected: list[str]
) -> None:
    async with live_server_proc.mcp("2026-07-28", path="/mcp/askme") as client:
        result = await client.get_prompt(name, arguments)
    content = result.messages[0].content
    assert isinstance(content, TextContent)
    for needle in expected:
        assert needle in content.text
    assert "## What to do" in content.text


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("suggest-follow-up-questions", {"originalQuestion": "Which DB?"}),
        ("human-decision", {"options": "a; b"}),
        ("expert-consultation", {"topic": "TLS"}),
        ("creative-brainstorm", {}),
    ],
)
async def test_a_prompt_without_its_required_arguments_is_refused(
    live_server_proc: LiveServer, name: str, arguments: dict[str, str]
) -> None:
    async with live_server_proc.mcp("legacy", path="/mcp/askme") as client:
        with pytest.raises(MCPError) as refused:
            await client.get_prompt(name, arguments)
    assert refused.value.code == -32602
    assert "required" in refused.value.error.message
