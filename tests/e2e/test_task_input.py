"""A task's question answered in the agent's own client (issue 40, HOOKBRIDGE_ANSWER_IN_CLIENT): a form
elicitation in the task's input requests, answered with tasks/update, the first answer anywhere winning. The mcp
SDK's own Client, with a form elicitation callback and the Tasks extension, against a real daphne process."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitRequestParams, ElicitResult, Implementation

from testing import tasks
from testing.live import LiveServer, serving

pytestmark = pytest.mark.e2e

OPTIONS = [{"value": "eu", "label": "Europe"}, {"value": "us", "label": "United States"}]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving(HOOKBRIDGE_TASKS="auto", HOOKBRIDGE_ANSWER_IN_CLIENT="1")


async def shows_forms(context: Any, params: ElicitRequestParams) -> ElicitResult:
    # Declares that this client shows forms; a task's form arrives in tasks/get, not as a request.
    return ElicitResult(action="cancel")


@asynccontextmanager
async def client(server: LiveServer, *, forms: bool = True, path: str = "/mcp") -> AsyncIterator[Client]:
    options: dict[str, Any] = {
        "extensions": [tasks.TasksClient()],
        "client_info": Implementation(name="term", version="1"),
    }
    if forms:
        options["elicitation_callback"] = shows_forms
    async with server.mcp("2026-07-28", path=path, **options) as connected:
        yield connected


async def ask(server: LiveServer, text: str, *, forms: bool = True) -> tasks.TaskHandle:
    async with client(server, forms=forms) as connected:
        handle = await connected.session.call_tool(
            "ask_question", {"question": text, "options": OPTIONS}, allow_claimed=True
        )
    assert isinstance(handle, tasks.TaskHandle)
    return handle


async def test_the_question_is_offered_as_a_form_and_an_answer_there_answers_it_for_everyone(
    server: LiveServer,
) -> None:
    handle = await ask(server, "Input: which region?")
    assert handle.status == "input_required"
    async with client(server) as connected:
        state = await tasks.get(connected.session, handle.task_id)
        assert state["status"] == "input_required"
        assert state["statusMessage"].endswith("You may answer here too: the first answer wins.")
        request = state["inputRequests"]["answer"]
        assert request["method"] == "elicitation/create"
        assert request["params"]["message"] == "Input: which region?"
        schema = request["params"]["requestedSchema"]
        assert schema["properties"]["choice"]["oneOf"] == [
            {"const": "eu", "title": "Europe"},
            {"const": "us", "title": "United States"},
        ]
        assert schema["properties"]["answer"]["type"] == "string"  # free text beside the options
        await tasks.update(
            connected.session, handle.task_id, {"answer": {"action": "accept", "content": {"choice": "us"}}}
        )
        done = await tasks.get(connected.session, handle.task_id)
    assert done["status"] == "completed"
    assert tasks.seeds_part(done["result"]["structuredContent"]) == {"answer": "us"}
    assert done["result"]["content"][-1]["text"].startswith(
        "Answered by agent-a (in term) in the agent's own client at "
    )
    answered = await server.wait_for_question("Input: which region?", status="answered")
    assert answered["answer"]["answeredBy"] == "agent-a (in term)"
    async with server.login() as browser:
        page = (await browser.get(f"/questions/{answered['id']}/")).text
    assert "Answered by agent-a (in term) in the agent&#x27;s own client at " in page, "which way the answer went"


async def test_a_value_outside_the_form_is_refused_naming_it_and_changes_nothing(server: LiveServer) -> None:
    handle = await ask(server, "Input: a bad choice?")
    async with client(server) as connected:
        cases: list[tuple[dict[str, Any], str]] = [
            ({"answer": {"action": "accept", "content": {"choice": "mars"}}},
             "inputResponses.answer.content.choice: 'mars' is not one of this question's options."),
            ({"answer": {"action": "maybe"}}, "inputResponses.answer.action: must be 'accept', 'decline' or 'cancel'"),
            ({"other": {"action": "accept", "content": {}}}, "inputResponses.other: this task asks for no such input"),
        ]  # fmt: skip
        for responses, said in cases:
            with pytest.raises(MCPError) as refused:
                await tasks.update(connected.session, handle.task_id, responses)
            assert refused.value.error.code == -32602
            assert refused.value.error.message == said
        assert (await tasks.get(connected.session, handle.task_id))["status"] == "input_required"
    pending = await server.wait_for_question("Input: a bad choice?")  # still pending
    async with server.login() as browser:
        page = (await browser.get(f"/questions/{pending['id']}/")).text
    assert "It is also offered in the agent's own client: the first answer, there or here, wins." in page


@pytest.mark.parametrize(
    "response",
    [{"action": "decline"}, {"action": "accept", "content": {}}, {"action": "accept", "content": {"answer": ""}}],
    ids=["declined", "accepted empty", "accepted blank"],
)
async def test_declined_or_accepted_empty_in_the_client_the_question_stays_with_the_team(
    server: LiveServer, response: dict[str, Any]
) -> None:
    # An empty accept is not refused: Claude Code cancels a task whose update is refused, withdrawing the question.
    text = f"Input: left to the team ({json.dumps(response)})?"
    handle = await ask(server, text)
    async with client(server) as connected:
        await tasks.update(connected.session, handle.task_id, {"answer": response})
        assert (await tasks.get(connected.session, handle.task_id))["status"] == "working"
        question = await server.wait_for_question(text)
        async with server.login() as browser:
            page = (await browser.get(f"/questions/{question['id']}/")).text
        assert "Asked in the background" in page
        assert "also offered in the agent" not in page, "the card no longer says it is offered there"
        assert (await server.answer_via_api(question["id"], "eu")).status_code == 200
        done = await tasks.get(connected.session, handle.task_id)
    assert tasks.seeds_part(done["result"]["structuredContent"]) == {"answer": "eu"}


async def test_when_the_team_answered_first_the_clients_answer_is_acknowledged_and_the_teams_stands(
    server: LiveServer,
) -> None:
    handle = await ask(server, "Input: who was first?")
    question = await server.wait_for_question("Input: who was first?")
    assert (await server.answer_via_api(question["id"], "eu")).status_code == 200
    async with client(server) as connected:
        accepted = {"answer": {"action": "accept", "content": {"choice": "us"}}}
        assert (await tasks.update(connected.session, handle.task_id, accepted))["resultType"] == "complete"
        done = await tasks.get(connected.session, handle.task_id)
    assert tasks.seeds_part(done["result"]["structuredContent"]) == {"answer": "eu"}
    assert done["result"]["content"][-1]["text"].startswith("Answered by answer-bot through the JSON API at ")


async def test_a_client_that_shows_no_forms_is_not_offered_one(server: LiveServer) -> None:
    handle = await ask(server, "Input: no forms here?", forms=False)
    assert handle.status == "working"


async def test_hypotheses_are_rated_in_the_client_and_the_agent_gets_the_ratings_as_the_seed_gives_them(
    server: LiveServer,
) -> None:
    ratings = {"title": "Input: why slow?", "description": "Two guesses.", "hypotheses": ["Cold cache", "Small box"]}
    async with client(server, path="/mcp/askme") as connected:
        handle = await connected.session.call_tool("challenge-hypothesis", ratings, allow_claimed=True)
    assert isinstance(handle, tasks.TaskHandle)
    assert handle.status == "input_required"
    async with client(server) as connected:
        form = (await tasks.get(connected.session, handle.task_id))["inputRequests"]["answer"]["params"]
        assert form["requestedSchema"]["required"] == ["h0", "h1"]
        rated = {"answer": {"action": "accept", "content": {"h0": 6, "h0_comment": "likely", "h1": 2}}}
        await tasks.update(connected.session, handle.task_id, rated)
        done = await tasks.get(connected.session, handle.task_id)
    given = tasks.seeds_part(done["result"]["structuredContent"])["ratings"]
    assert [(r["hypothesis"], r["agreement"], r["comment"]) for r in given] == [
        ("Cold cache", 6, "likely"),
        ("Small box", 2, None),
    ]
