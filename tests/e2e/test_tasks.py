"""Questions as MCP tasks (issue 40), end to end: the mcp SDK's own Client with the Tasks extension declared
(testing.tasks, on mcp.client.extension) against a real daphne process."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp.client.extension import advertise
from mcp.shared.exceptions import MCPError

from testing import tasks
from testing.live import LiveServer, serving

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def tasks_server() -> Iterator[LiveServer]:
    yield from serving(HOOKBRIDGE_TASKS="auto")


async def _handle(server: LiveServer, arguments: dict[str, Any], *, token: str = "agent-a") -> tasks.TaskHandle:
    async with server.mcp("2026-07-28", token_name=token, extensions=[tasks.TasksClient()]) as client:
        handle = await client.session.call_tool("ask_question", arguments, allow_claimed=True)
    assert isinstance(handle, tasks.TaskHandle), handle
    return handle


async def test_a_client_that_declares_tasks_gets_one_at_once_and_the_answer_when_it_polls(
    tasks_server: LiveServer,
) -> None:
    handle = await _handle(tasks_server, {"question": "Task: which region?"})
    assert handle.status == "working"
    assert handle.status_message is not None
    assert handle.status_message.startswith("Waiting for a person: the question is on the dashboard at ")
    assert handle.poll_interval_ms == 2000
    # No deadline: kept while the agent polls, a minute past its last poll and the re-attach window (issue 55).
    assert handle.ttl_ms is not None
    assert (60 + 1800 - 5) * 1000 < handle.ttl_ms <= (60 + 1800 + 1) * 1000
    assert len(handle.task_id) >= 32
    question = await tasks_server.wait_for_question("Task: which region?")
    assert handle.status_message.endswith(f"/questions/{question['id']}/.")

    async with tasks_server.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
        working = await tasks.get(client.session, handle.task_id)
        assert working["status"] == "working"
        assert working["resultType"] == "complete"
        assert (await tasks_server.answer_via_api(question["id"], "eu-west-1")).status_code == 200
        done = await tasks.get(client.session, handle.task_id)
    assert done["status"] == "completed"
    result = done["result"]
    assert tasks.seeds_part(result["structuredContent"]) == {"answer": "eu-west-1"}  # the blocking call's own result
    assert result["content"][0]["text"] == '{"answer": "eu-west-1"}'
    assert result["content"][-1]["text"].startswith("Answered by answer-bot through the JSON API at ")


async def test_the_sdk_client_finishes_a_task_by_polling_as_hosts_do(tasks_server: LiveServer) -> None:
    extension = tasks.TasksClient()
    async with tasks_server.mcp("2026-07-28", extensions=[extension]) as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": "Task: polled to the end?"}))
        question = await tasks_server.wait_for_question("Task: polled to the end?")
        assert not call.done()
        assert (await tasks_server.answer_via_api(question["id"], "yes")).status_code == 200
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content is not None
    assert tasks.seeds_part(result.structured_content) == {"answer": "yes"}
    assert [handle.status for handle in extension.handles] == ["working"]


async def test_a_task_outlives_a_restart_of_the_server(tasks_server: LiveServer) -> None:
    handle = await _handle(tasks_server, {"question": "Task: through a restart?"})
    question = await tasks_server.wait_for_question("Task: through a restart?")
    tasks_server.stop()
    tasks_server.start()
    assert (await tasks_server.answer_via_api(question["id"], "still here")).status_code == 200
    async with tasks_server.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
        done = await tasks.get(client.session, handle.task_id)
    assert done["status"] == "completed"
    assert tasks.seeds_part(done["result"]["structuredContent"]) == {"answer": "still here"}


async def test_cancelling_a_task_withdraws_its_question_and_it_reads_as_cancelled(tasks_server: LiveServer) -> None:
    handle = await _handle(tasks_server, {"question": "Task: cancel me?"})
    question = await tasks_server.wait_for_question("Task: cancel me?")
    async with tasks_server.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
        for _ in range(2):  # the second cancel is acknowledged too, and changes nothing
            acknowledged = await tasks.cancel(client.session, handle.task_id)
            assert acknowledged["resultType"] == "complete"
            assert set(acknowledged) == {"resultType", "_meta"}, "an empty result: no task state in it"
        state = await tasks.get(client.session, handle.task_id)
    assert state["status"] == "cancelled"
    withdrawn = await tasks_server.wait_for_question("Task: cancel me?", status="cancelled")
    assert withdrawn["id"] == question["id"]
    response = await tasks_server.answer_via_api(question["id"], "too late")
    assert response.status_code == 409


@pytest.mark.parametrize("task_id", ["another", "made-up"])
async def test_nobody_else_reads_or_cancels_a_task(tasks_server: LiveServer, task_id: str) -> None:
    handle = await _handle(tasks_server, {"question": f"Task: mine alone ({task_id})?"})
    wanted = handle.task_id if task_id == "another" else "x" * 32
    async with tasks_server.mcp("2026-07-28", token_name="agent-b", extensions=[tasks.TasksClient()]) as client:
        for call in (tasks.get, tasks.cancel):
            with pytest.raises(MCPError) as refused:
                await call(client.session, wanted)
            assert refused.value.error.code == -32602
            assert refused.value.error.message == f"taskId: no task {wanted!r} of yours here"
    async with tasks_server.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
        assert (await tasks.get(client.session, handle.task_id))["status"] == "working"


async def test_the_same_agent_asking_again_gets_the_same_task(tasks_server: LiveServer) -> None:
    first = await _handle(tasks_server, {"question": "Task: asked twice?"})
    second = await _handle(tasks_server, {"question": "Task: asked twice?"})
    assert second.task_id == first.task_id
    assert len([q for q in await tasks_server.questions() if q["question"] == "Task: asked twice?"]) == 1


@pytest.mark.parametrize(
    ("mode", "extensions"), [("legacy", []), ("2026-07-28", []), ("2026-07-28", ["advertised", "default server"])]
)
async def test_a_client_without_the_extension_or_a_server_left_off_blocks_as_before(
    tasks_server: LiveServer, live_server_proc: LiveServer, mode: str, extensions: list[str]
) -> None:
    server = live_server_proc if extensions else tasks_server
    declared = [advertise(tasks.EXTENSION)] if extensions else []
    text = f"Task: blocking ({mode}, {len(extensions)})?"
    async with server.mcp(mode, extensions=declared) as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await server.wait_for_question(text)
        await asyncio.sleep(0.3)
        assert not call.done(), "the call waits for the answer"
        assert (await server.answer_via_api(question["id"], "as before")).status_code == 200
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {"answer": "as before"}


async def test_an_approval_is_never_a_task(tasks_server: LiveServer) -> None:
    decision = {"behavior": "deny", "message": "not now"}
    async with tasks_server.mcp("2026-07-28", path="/mcp/approvals", extensions=[tasks.TasksClient()]) as client:
        call = asyncio.create_task(
            client.call_tool("approve", {"tool_name": "Bash", "input": {"command": "echo task-approval"}})
        )
        question = await tasks_server.wait_for_question("May the agent run Bash: echo task-approval?")
        await asyncio.sleep(0.3)
        assert not call.done(), "an approval holds the call until a person decides"
        assert (await tasks_server.answer_via_api(question["id"], decision)).status_code == 200
        result = await asyncio.wait_for(call, 30)
    assert json.loads(result.content[0].text) == decision  # type: ignore[union-attr]


async def test_discover_lists_the_extension_only_where_tasks_are_on(
    tasks_server: LiveServer, live_server_proc: LiveServer
) -> None:
    for server, listed in ((tasks_server, True), (live_server_proc, False)):
        async with server.mcp("auto") as client:  # "auto": the SDK asks server/discover
            assert client.protocol_version == "2026-07-28"
            extensions = client.server_capabilities.extensions or {}
        assert (tasks.EXTENSION in extensions) is listed


async def test_an_update_with_input_nobody_asked_for_is_refused_naming_it(tasks_server: LiveServer) -> None:
    handle = await _handle(tasks_server, {"question": "Task: no input asked?"})
    async with tasks_server.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
        with pytest.raises(MCPError) as refused:
            await tasks.update(client.session, handle.task_id, {"form": {"action": "accept"}})
        assert refused.value.error.code == -32602
        assert refused.value.error.message == "inputResponses.form: this task asks for no such input"
        assert (await tasks.get(client.session, handle.task_id))["status"] == "working"


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({}, "inputResponses: an object of the inputs the task asked for, by key, not null (or missing)"),
        ({"inputResponses": None}, "inputResponses: an object of the inputs the task asked for, by key, not null"),
        ({"inputResponses": []}, "inputResponses: an object of the inputs the task asked for, by key, not a list"),
        ({"inputResponses": "yes"}, "inputResponses: an object of the inputs the task asked for, by key, not text"),
        ({"taskId": 7, "inputResponses": {}}, "taskId: the task's id as the call's result gave it: text of 1 to 64"),
        ({"taskId": None, "inputResponses": {}}, "taskId: the task's id as the call's result gave it"),
        ({"taskId": [], "inputResponses": {}}, "taskId: the task's id as the call's result gave it"),
        ({"taskId": "x" * 10_000, "inputResponses": {}}, "not 10000 characters"),
    ],
)
async def test_a_malformed_update_is_refused_naming_its_field_and_changes_nothing(
    tasks_server: LiveServer, params: dict[str, Any], said: str
) -> None:
    """Issue 54: never the SDK's bare "Invalid request parameters" with empty data."""
    handle = await _handle(tasks_server, {"question": f"Task: malformed update {sorted(params)} {str(params)[:40]}?"})
    sent = {"taskId": handle.task_id, **params}
    async with tasks_server.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
        with pytest.raises(MCPError) as refused:
            await tasks.raw_update(client.session, **sent)
        assert refused.value.error.code == -32602
        assert said in refused.value.error.message
        assert refused.value.error.data == {"field": refused.value.error.message.split(":", 1)[0]}
        assert (await tasks.get(client.session, handle.task_id))["status"] == "working"


async def test_an_askme_task_is_kept_past_its_deadline_and_its_card_says_the_agent_goes_on(
    tasks_server: LiveServer,
) -> None:
    async with tasks_server.mcp("2026-07-28", path="/mcp/askme", extensions=[tasks.TasksClient()]) as client:
        handle = await client.session.call_tool(
            "ask-one-question", {"question": "Task: seen on the card?"}, allow_claimed=True
        )
    assert isinstance(handle, tasks.TaskHandle)
    # Ask-Me's own 300 s timeout, then the re-attach window (1800 s) in which the outcome is kept, from the task's
    # creation (a few milliseconds after the question's).
    assert handle.ttl_ms is not None
    assert (300 + 1800 - 5) * 1000 < handle.ttl_ms <= (300 + 1800) * 1000
    question = await tasks_server.wait_for_question("Task: seen on the card?")
    assert question["agentWaiting"] is True, "a task is an agent waiting, though no call is held"
    async with tasks_server.login() as browser:
        page = (await browser.get(f"/questions/{question['id']}/")).text
    assert "Asked in the background: the agent goes on working, and your answer reaches it as a task result." in page
    assert "stopped waiting" not in page


async def test_a_blocking_re_ask_of_a_task_waits_and_its_card_no_longer_says_background(
    tasks_server: LiveServer,
) -> None:
    handle = await _handle(tasks_server, {"question": "Task: then asked the blocking way?"})
    async with tasks_server.mcp("2026-07-28") as client:  # the same agent, without the extension
        call = asyncio.create_task(client.call_tool("ask_question", {"question": "Task: then asked the blocking way?"}))
        question = await tasks_server.wait_for_question("Task: then asked the blocking way?")
        async with tasks_server.login() as browser:
            for _ in range(100):
                page = (await browser.get(f"/questions/{question['id']}/")).text
                if "Asked in the background" not in page:
                    break
                await asyncio.sleep(0.05)
        assert "Asked in the background" not in page
        assert (await tasks_server.answer_via_api(question["id"], "one answer")).status_code == 200
        result = await asyncio.wait_for(call, 30)
        assert result.structured_content == {"answer": "one answer"}
    async with tasks_server.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
        done = await tasks.get(client.session, handle.task_id)
    assert tasks.seeds_part(done["result"]["structuredContent"]) == {"answer": "one answer"}, (
        "one answer, for both ways of asking"
    )


@pytest.fixture(scope="module")
def allowed_server() -> Iterator[LiveServer]:
    yield from serving(HOOKBRIDGE_TASKS="allowed")


async def test_with_tasks_allowed_only_a_token_marked_for_the_background_gets_one(allowed_server: LiveServer) -> None:
    made = allowed_server.manage("create_token", "background-agent", "--background")
    allowed_server.tokens["background-agent"] = made.strip().splitlines()[-1]
    handle = await _handle(allowed_server, {"question": "Allowed: in the background?"}, token="background-agent")
    assert handle.status == "working"

    async with allowed_server.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:  # agent-a: not marked
        call = asyncio.create_task(client.call_tool("ask_question", {"question": "Allowed: blocking?"}))
        question = await allowed_server.wait_for_question("Allowed: blocking?")
        await asyncio.sleep(0.3)
        assert not call.done(), "a token not marked for the background blocks as before"
        assert (await allowed_server.answer_via_api(question["id"], "blocked")).status_code == 200
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {"answer": "blocked"}


async def test_with_tasks_allowed_an_asking_tool_lists_background_and_a_call_that_passes_it_gets_a_task(
    allowed_server: LiveServer,
) -> None:
    async with allowed_server.mcp("2026-07-28", path="/mcp/maxsim+approvals") as client:
        schemas = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    assert schemas["ask_question"]["properties"]["background"]["type"] == "boolean"
    assert "background" not in schemas["ask_question"].get("required", [])
    assert "background" not in schemas["approve"]["properties"], "an approval is never offered the background"
    assert "background" not in schemas["wait_for_answer"]["properties"], "it asks nobody"

    handle = await _handle(allowed_server, {"question": "Allowed: chosen by the call?", "background": True})
    assert handle.status == "working"
    question = await allowed_server.wait_for_question("Allowed: chosen by the call?")
    assert (await allowed_server.answer_via_api(question["id"], "north")).status_code == 200
    async with allowed_server.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
        done = await tasks.get(client.session, handle.task_id)
    assert tasks.seeds_part(done["result"]["structuredContent"]) == {"answer": "north"}


async def test_background_from_a_client_without_tasks_blocks_and_a_bad_value_is_refused_naming_it(
    allowed_server: LiveServer,
) -> None:
    async with allowed_server.mcp("2026-07-28") as client:  # no extension declared: never a task
        call = asyncio.create_task(
            client.call_tool("ask_question", {"question": "Allowed: no tasks here?", "background": True})
        )
        question = await allowed_server.wait_for_question("Allowed: no tasks here?")
        await asyncio.sleep(0.3)
        assert not call.done()
        assert (await allowed_server.answer_via_api(question["id"], "waited")).status_code == 200
        assert (await asyncio.wait_for(call, 30)).structured_content == {"answer": "waited"}

        refused = await client.call_tool("ask_question", {"question": "Allowed: a bad value?", "background": "yes"})
    assert refused.is_error
    assert refused.content[0].text == (  # type: ignore[union-attr]
        "Invalid arguments for ask_question: arguments.background: must be true or false"
    )
    assert not [q for q in await allowed_server.questions() if q["question"] == "Allowed: a bad value?"]


async def test_where_the_choice_is_not_the_agents_the_seeds_schemas_are_unchanged(
    tasks_server: LiveServer, live_server_proc: LiveServer
) -> None:
    for server in (tasks_server, live_server_proc):
        async with server.mcp("2026-07-28") as client:
            schemas = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        assert "background" not in schemas["ask_question"]["properties"]


async def test_in_task_mode_the_instructions_say_a_question_may_come_back_as_a_task_not_that_asks_block(
    tasks_server: LiveServer,
) -> None:
    """Issue 55, point 12: raw initialize, as any client sends it, against a server with HOOKBRIDGE_TASKS=auto."""
    hello = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }  # fmt: skip
    headers = {
        "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
        **tasks_server.auth("agent-a"),
    }  # fmt: skip
    async with httpx2.AsyncClient(timeout=30) as http:
        reply = await http.post(f"{tasks_server.url}/mcp", json=hello, headers=headers)
    assert reply.status_code == 200, reply.text
    text = reply.text
    body = json.loads(text.split("data: ", 1)[1].split("\n", 1)[0] if text.startswith(("event:", "data:")) else text)
    instructions = body["result"]["instructions"]
    assert "blocks until" not in instructions
    assert "ask_question waits until a person on your team answers" in instructions
    assert "a question comes back at once as a task instead: go on working and poll tasks/get" in instructions
