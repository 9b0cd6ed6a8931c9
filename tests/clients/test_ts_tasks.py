"""Questions as MCP tasks from TypeScript (issue 40). The TypeScript SDK 1.32 that hosts embed speaks the
2025-11-25 protocol, whose experimental tasks are not the 2026-07-28 Tasks extension: its own client keeps
blocking, and a host that wants tasks today writes the extension on fetch, as tests/ts/driver.mjs does
(its "task-call": declare, get a handle, poll tasks/get at the server's interval)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from testing.live import LiveServer, serving
from testing.ts_client import ts_clients


@pytest.fixture(scope="module")
def tasks_server() -> Iterator[LiveServer]:
    yield from serving(HOOKBRIDGE_TASKS="auto")


async def test_a_typescript_host_gets_a_task_polls_it_and_reads_the_answer_and_who_gave_it(
    tasks_server: LiveServer,
) -> None:
    async with ts_clients() as ts:
        await ts.send(
            op="task-call", call="k", url=f"{tasks_server.url}/mcp", token=tasks_server.tokens["agent-a"],
            tool="ask_question", args={"question": "TS task: which region?"},
        )  # fmt: skip
        handle = (await ts.wait_for(event="task", call="k"))["handle"]
        assert handle["status"] == "working"
        assert handle["pollIntervalMs"] == 2000
        question = await tasks_server.wait_for_question("TS task: which region?")
        assert (await tasks_server.answer_via_api(question["id"], "eu-west-1")).status_code == 200
        state = (await ts.wait_for(event="task-state", call="k", timeout=20))["state"]
    assert state["status"] == "completed"
    assert state["result"]["structuredContent"]["answer"] == "eu-west-1"
    assert state["result"]["structuredContent"]["answered"].startswith("Answered by answer-bot through the JSON API")


async def test_a_typescript_host_cancels_its_task_and_another_token_cannot_read_it(tasks_server: LiveServer) -> None:
    async with ts_clients() as ts:
        await ts.send(
            op="task-call", call="c", url=f"{tasks_server.url}/mcp", token=tasks_server.tokens["agent-a"],
            tool="ask_question", args={"question": "TS task: cancel me?"},
        )  # fmt: skip
        handle = (await ts.wait_for(event="task", call="c"))["handle"]
        await ts.send(
            op="task-request", call="c", method="tasks/get", params={"taskId": handle["taskId"]},
            token=tasks_server.tokens["agent-b"],
        )  # fmt: skip
        refused = (await ts.wait_for(event="response", call="c"))["response"]["message"]
        assert refused["error"]["code"] == -32602
        assert refused["error"]["message"] == f"taskId: no task {handle['taskId']!r} of yours here"

        await ts.send(op="task-cancel", call="c")
        cancelled = (await ts.wait_for(event="task-cancelled", call="c"))["response"]
        assert cancelled["status"] == 200
        assert "result" in cancelled["message"], cancelled
        state = (await ts.wait_for(event="task-state", call="c", timeout=20))["state"]
    assert state["status"] == "cancelled"
    withdrawn = await tasks_server.wait_for_question("TS task: cancel me?", status="cancelled")
    assert (await tasks_server.answer_via_api(withdrawn["id"], "too late")).status_code == 409


async def test_the_typescript_sdks_own_client_still_blocks_on_a_server_that_offers_tasks(
    tasks_server: LiveServer,
) -> None:
    async with ts_clients() as ts:
        await ts.connect("a", f"{tasks_server.url}/mcp", tasks_server.tokens["agent-a"])
        await ts.call("a", "b", "ask_question", {"question": "TS SDK: still blocking?"})
        question = await tasks_server.wait_for_question("TS SDK: still blocking?")
        await asyncio.sleep(0.3)
        assert not ts.all(call="b", event="result"), "the call waits for the answer"
        assert (await tasks_server.answer_via_api(question["id"], "as before")).status_code == 200
        outcome = await ts.outcome("b")
    assert outcome["event"] == "result"
    assert outcome["result"]["structuredContent"] == {"answer": "as before"}
