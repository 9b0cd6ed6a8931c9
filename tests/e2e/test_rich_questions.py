"""Every Ask-Me and Clifford tool round-trips its answer exactly, over real HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from mcp.types import CallToolResult

from questions.kinds import AGREEMENT_SCALE, DONE_INSTRUCTION, DRILL_DEEPER_INSTRUCTION
from testing.live import LiveServer, receive_until, text_of


async def round_trip(
    server: LiveServer,
    path: str,
    tool: str,
    arguments: dict[str, Any],
    shows_as: str,
    answer: Callable[[dict[str, Any]], Awaitable[Any]],
    mode: str = "legacy",
) -> CallToolResult:
    """Call `tool`, wait for its question to show as `shows_as`, answer it with `answer(question)`."""
    async with server.mcp(mode, path=path) as client:
        call = asyncio.create_task(client.call_tool(tool, arguments))
        question = await server.wait_for_question(shows_as)
        assert not call.done()
        response = await answer(question)
        if hasattr(response, "status_code"):
            assert response.status_code == 200, response.text
        return await asyncio.wait_for(call, 30)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_ask_one_question_returns_the_free_text(live_server_proc: LiveServer, mode: str) -> None:
    text = f"What is the staging URL? ({mode})"
    result = await round_trip(
        live_server_proc,
        "/mcp/askme",
        "ask-one-question",
        {"question": text},
        text,
        lambda q: live_server_proc.answer_on_dashboard(q["id"], {"answer": "https://staging.example"}),
        mode,
    )
    assert result.structured_content == {"answer": "https://staging.example"}
    assert not result.is_error


MULTIPLE = {
    "questions": [
        {"text": "Which **platforms**?", "options": ["Linux", "macOS", "Windows"]},
        {"text": "Which databases?", "options": ["PostgreSQL", "SQLite"]},
    ]
}


@pytest.mark.parametrize(
    ("status", "instruction"), [("done", DONE_INSTRUCTION), ("drill-deeper", DRILL_DEEPER_INSTRUCTION)]
)
async def test_ask_multiple_choice_returns_every_selection_with_its_comment(
    live_server_proc: LiveServer, status: str, instruction: str
) -> None:
    arguments = {"questions": [{**q, "text": f"{q['text']} ({status})"} for q in MULTIPLE["questions"]]}
    form = {
        "q0-o0": "1",
        "q0-o0-comment": "primary target",
        "q0-o2": "1",
        "q0-o2-comment": "",
        "q0-o1-comment": "ignored: not selected",
        "q1-o1": "1",
        "q1-o1-comment": "for local runs",
        "completionStatus": status,
    }
    result = await round_trip(
        live_server_proc,
        "/mcp/askme",
        "ask-multiple-choice",
        arguments,
        f"Which **platforms**? ({status})\n\nWhich databases? ({status})",
        lambda q: live_server_proc.answer_on_dashboard(q["id"], form),
    )
    assert result.structured_content == {
        "completionStatus": status,
        "answers": [
            {
                "question": f"Which **platforms**? ({status})",
                "selections": [
                    {"option": "Linux", "comment": "primary target"},
                    {"option": "Windows", "comment": None},
                ],
            },
            {
                "question": f"Which databases? ({status})",
                "selections": [{"option": "SQLite", "comment": "for local runs"}],
            },
        ],
        "instruction": instruction,
    }
    assert instruction in text_of(result)


async def test_challenge_hypothesis_returns_all_seven_scale_points(live_server_proc: LiveServer) -> None:
    hypotheses = [f"Hypothesis number {n}" for n in range(1, 8)]
    arguments = {
        "title": "Why is the build slow?",
        "description": "CI went from *4* to 9 minutes.",
        "hypotheses": hypotheses,
    }
    form = {f"h{i}": str(i + 1) for i in range(7)}
    form["h0-comment"] = "definitely not"
    form["h6-comment"] = "seen it in the profile"
    result = await round_trip(
        live_server_proc,
        "/mcp/askme",
        "challenge-hypothesis",
        arguments,
        "Why is the build slow?",
        lambda q: live_server_proc.answer_on_dashboard(q["id"], form),
        "2026-07-28",
    )
    assert result.structured_content is not None
    ratings = result.structured_content["ratings"]
    assert [(r["hypothesis"], r["agreement"], r["label"]) for r in ratings] == [
        (hypothesis, value, label) for hypothesis, (value, label) in zip(hypotheses, AGREEMENT_SCALE, strict=True)
    ]
    assert [r["comment"] for r in ratings] == ["definitely not", None, None, None, None, None, "seen it in the profile"]


async def test_challenge_hypothesis_refuses_an_unrated_hypothesis(live_server_proc: LiveServer) -> None:
    arguments = {"title": "Rate them all?", "description": "Both, please.", "hypotheses": ["One", "Two"]}
    async with live_server_proc.mcp("legacy", path="/mcp/askme") as client:
        call = asyncio.create_task(client.call_tool("challenge-hypothesis", arguments))
        question = await live_server_proc.wait_for_question("Rate them all?")
        refused = await live_server_proc.answer_on_dashboard(question["id"], {"h0": "4"})
        assert refused.status_code == 422
        assert "Rate hypothesis 2" in refused.text
        accepted = await live_server_proc.answer_on_dashboard(question["id"], {"h0": "4", "h1": "5"})
        assert accepted.status_code == 200
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content is not None
    assert [r["agreement"] for r in result.structured_content["ratings"]] == [4, 5]


NEXT_OPTIONS = [
    {"id": "cache", "title": "Add a cache", "description": "Redis in front of the API", "icon": "⚡"},
    {"id": "index", "title": "Add an index", "description": "On `orders.created_at`"},
    {"id": "shard", "title": "Shard", "description": "Split by tenant"},
]


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        (
            {"choice": "index", "message": "start small"},
            {
                "action": "selected",
                "selectedOption": {"id": "index", "title": "Add an index"},
                "message": "start small",
            },
        ),
        (
            {"action": "aborted", "message": "none of these"},
            {"action": "aborted", "selectedOption": None, "message": "none of these"},
        ),
        ({"action": "new-ideas", "message": ""}, {"action": "new-ideas", "selectedOption": None, "message": None}),
    ],
    ids=["select", "abort", "new-ideas"],
)
async def test_choose_next_says_which_of_the_three_happened(
    live_server_proc: LiveServer, form: dict[str, str], expected: dict[str, Any]
) -> None:
    title = f"Make the API faster ({expected['action']})"
    arguments = {"title": title, "description": "p99 is **2 s**.", "options": NEXT_OPTIONS}
    result = await round_trip(
        live_server_proc,
        "/mcp/askme",
        "choose-next",
        arguments,
        title,
        lambda q: live_server_proc.answer_on_dashboard(q["id"], form),
    )
    assert result.structured_content == expected


async def test_a_structured_answer_can_come_through_the_api(live_server_proc: LiveServer) -> None:
    title = "Pick a direction through the API"
    arguments = {"title": title, "description": "Bots answer too.", "options": NEXT_OPTIONS[:2]}
    answer = {"action": "selected", "optionId": "cache", "message": "from a bot"}
    result = await round_trip(
        live_server_proc,
        "/mcp/askme",
        "choose-next",
        arguments,
        title,
        lambda q: live_server_proc.answer_via_api(q["id"], answer),
    )
    assert result.structured_content == {
        "action": "selected",
        "selectedOption": {"id": "cache", "title": "Add a cache"},
        "message": "from a bot",
    }


async def test_request_help_returns_the_answer(live_server_proc: LiveServer) -> None:
    arguments = {"task": "Migrate billing", "reason": "Tests need a Stripe key", "question": "Where is the test key?"}
    result = await round_trip(
        live_server_proc,
        "/mcp/clifford",
        "request_help",
        arguments,
        "Where is the test key?",
        lambda q: live_server_proc.answer_on_dashboard(q["id"], {"answer": "In 1Password, vault CI"}),
    )
    assert result.structured_content == {"answer": "In 1Password, vault CI"}


@pytest.mark.parametrize("where", ["dashboard", "api"])
async def test_a_dismissed_help_request_tells_the_agent_to_proceed(live_server_proc: LiveServer, where: str) -> None:
    text = f"Can someone look at this? ({where})"
    arguments = {"task": "Refactor", "reason": "Unsure about the design", "question": text}

    async def dismiss(question: dict[str, Any]) -> Any:
        if where == "dashboard":
            async with live_server_proc.login() as browser:
                return await browser.post(f"/questions/{question['id']}/dismiss")
        import httpx2

        async with httpx2.AsyncClient(headers=live_server_proc.auth("answer-bot"), timeout=60) as http:
            return await http.post(f"{live_server_proc.url}/api/questions/{question['id']}/dismiss")

    result = await round_trip(live_server_proc, "/mcp/clifford", "request_help", arguments, text, dismiss)
    assert result.structured_content is not None
    assert result.structured_content["status"] == "dismissed"
    assert "proceed on your own judgement" in result.structured_content["message"]
    who = live_server_proc.username if where == "dashboard" else "answer-bot"
    assert f"dismissed by {who}" in result.structured_content["message"]
    assert json.loads(text_of(result))["status"] == "dismissed"
    stored = await live_server_proc.wait_for_question(text, status="cancelled")
    assert (stored["cancelReason"], stored["dismissedBy"]) == ("dismissed", who)


async def test_an_askme_question_times_out_and_leaves_the_dashboard(askme_timeout_server: LiveServer) -> None:
    text = "Nobody will answer this in time?"
    async with askme_timeout_server.login() as browser, askme_timeout_server.dashboard_socket(browser) as dashboard:
        await receive_until(dashboard, 'id="question-list"')
        async with askme_timeout_server.mcp("legacy", path="/mcp/askme") as client:
            result = await asyncio.wait_for(client.call_tool("ask-one-question", {"question": text}), 30)
        removed = await receive_until(dashboard, 'class="resolution outcome-')
    assert "timed out" in removed
    assert result.is_error
    assert result.structured_content is not None
    assert result.structured_content["status"] == "timed_out"
    assert "No answer came in time" in text_of(result)


BAD_RICH_CALLS: list[tuple[str, str, dict[str, Any], str]] = [
    ("/mcp/askme", "choose-next", {"title": "t", "description": "d", "options": NEXT_OPTIONS[:1]}, "options"),
    (
        "/mcp/askme",
        "choose-next",
        {
            "title": "t",
            "description": "d",
            "options": [{"id": str(n), "title": f"o{n}", "description": ""} for n in range(9)],
        },
        "options",
    ),
    (
        "/mcp/askme",
        "choose-next",
        {"title": "t", "description": "d", "options": [NEXT_OPTIONS[0], NEXT_OPTIONS[0]]},
        "options",
    ),
    ("/mcp/askme", "challenge-hypothesis", {"title": "t", "description": "d", "hypotheses": []}, "hypotheses"),
    ("/mcp/askme", "ask-one-question", {"question": "x" * 20_001}, "question"),
    ("/mcp/askme", "ask-multiple-choice", {"questions": []}, "questions"),
    ("/mcp/askme", "ask-multiple-choice", {"questions": [{"text": "q", "options": ["a", "a"]}]}, "options"),
    ("/mcp/clifford", "request_help", {"task": "t", "reason": "r"}, "question"),
]


@pytest.mark.parametrize(("path", "tool", "arguments", "argument"), BAD_RICH_CALLS)
async def test_a_bad_rich_question_gets_an_error_and_stores_nothing(
    live_server_proc: LiveServer, path: str, tool: str, arguments: dict[str, Any], argument: str
) -> None:
    before = len(await live_server_proc.questions())
    async with live_server_proc.mcp("legacy", path=path) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    assert argument in text_of(result)
    assert len(await live_server_proc.questions()) == before
