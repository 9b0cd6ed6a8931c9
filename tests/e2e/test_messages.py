"""What the server tells an agent names only tools its endpoint lists; asking tools say what they do first.

Hosts defer MCP tools behind a tool search and pick them by description; an agent told to
call a tool its endpoint does not have fails, or worse, calls another server's.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from mcpapi.toolsets import builtin_tool_names
from testing.live import LiveServer
from testing.ts_client import ts_clients

ENDPOINTS = ["/mcp", "/mcp/maxsim", "/mcp/askme", "/mcp/clifford", "/mcp/hooks", "/mcp/progress", "/mcp/askme+maxsim"]

ASKING: dict[str, dict[str, dict[str, Any]]] = {
    "/mcp/maxsim": {"ask_question": {"question": "Pending in maxsim?"}},
    "/mcp/clifford": {"request_help": {"task": "Port it", "reason": "Two specs disagree", "question": "Which?"}},
    "/mcp/askme": {
        "ask-one-question": {"question": "Pending in askme?"},
        "ask-multiple-choice": {"questions": [{"text": "Pick", "options": ["a", "b"]}]},
        "challenge-hypothesis": {"title": "Caching", "description": "Why slow?", "hypotheses": ["the cache"]},
        "choose-next": {
            "title": "Next",
            "description": "What now?",
            "options": [{"id": "a", "title": "A", "description": "a"}, {"id": "b", "title": "B", "description": "b"}],
        },
    },
    "/mcp/askme+maxsim": {"ask-one-question": {"question": "Pending in askme+maxsim?"}},
}


def named_tools(text: str) -> set[str]:
    """Every built-in tool name the text mentions."""
    return {name for name in builtin_tool_names() if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)}


@pytest.mark.parametrize("path", ENDPOINTS)
async def test_the_instructions_name_only_the_endpoints_own_tools(live_server_proc: LiveServer, path: str) -> None:
    async with ts_clients() as ts:
        await ts.connect("host", f"{live_server_proc.url}{path}", live_server_proc.tokens["agent-a"])
        await ts.send(op="tools", client="host")
        listed: dict[str, Any] = await ts.wait_for(event="tools", client="host")
    tools = {tool["name"] for tool in listed["tools"]}
    instructions = listed["instructions"]
    assert instructions.startswith("Hook Bridge connects you to the people on your team.")
    assert named_tools(instructions) <= tools, (path, instructions)
    if tools & {"ask_question", "ask-one-question", "request_help"}:
        assert "status 'pending'" in instructions


@pytest.mark.parametrize(("path", "tool"), [(path, tool) for path, tools in ASKING.items() for tool in tools])
async def test_a_still_pending_result_names_only_the_endpoints_own_tools(
    short_hold_server: LiveServer, path: str, tool: str
) -> None:
    async with short_hold_server.mcp("legacy", path=path) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        held = await asyncio.wait_for(client.call_tool(tool, ASKING[path][tool]), 30)
    pending = held.structured_content
    assert pending is not None, held
    assert pending["status"] == "pending", held
    named = named_tools(pending["message"])
    assert named <= listed, (path, pending["message"])
    assert tool in named, "it says which call keeps waiting"
    assert ("wait_for_answer" in named) == ("wait_for_answer" in listed)


async def test_every_asking_tool_says_first_that_it_asks_a_person(live_server_proc: LiveServer) -> None:
    async with live_server_proc.mcp("legacy", path="/mcp/maxsim+askme+clifford") as client:
        tools = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
    asking = {name: tools[name] for name in tools if name not in ("submit_lifecycle_event", "get_phase_status")}
    assert set(asking) == {"ask_question", "wait_for_answer", *ASKING["/mcp/askme"], "request_help"}
    for name, description in asking.items():
        if name == "wait_for_answer":
            assert description.startswith("Keep waiting for a person's answer"), description
        else:
            assert description.startswith("Ask a person on your team"), (name, description)
