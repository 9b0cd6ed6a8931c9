"""Team mode, issue 40: a question served as an MCP task on two workers sharing the real PostgreSQL and Redis,
answered by a Slack press, read on either worker and across a restart: one answer, one result.

Needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379 (see testing/team.py).
"""

from __future__ import annotations

import asyncio

import pytest

from testing import tasks
from testing.fakes import fake_slack, mail_sink, notify_env, slack_press
from testing.team import two_workers

pytestmark = pytest.mark.team


async def test_a_task_made_on_one_worker_is_answered_in_slack_and_read_on_both_across_a_restart() -> None:
    with fake_slack() as slack, mail_sink() as mails:
        env = {**notify_env(slack, mails, "slack@0s"), "HOOKBRIDGE_TASKS": "auto"}
        with two_workers(**env) as (worker_a, worker_b):
            options = [{"value": "blue", "label": "Blue"}, {"value": "green", "label": "Green"}]
            text = "Team task: which colour?"
            async with worker_a.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
                handle = await client.session.call_tool(
                    "ask_question", {"question": text, "options": options}, allow_claimed=True
                )
            assert isinstance(handle, tasks.TaskHandle)
            await asyncio.to_thread(slack.wait_for, "chat.postMessage")
            async with worker_b.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
                for _ in range(100):  # the post is recorded a moment after Slack took it
                    working = await tasks.get(client.session, handle.task_id)
                    if "Slack: sent" in working["statusMessage"]:
                        break
                    await asyncio.sleep(0.1)
                assert working["status"] == "working"
                assert working["statusMessage"].endswith("Slack: sent.")
                pressed = await slack_press(worker_b.url, slack, 0, "Green")
                assert pressed.status_code == 200, pressed.text
                done_b = await tasks.get(client.session, handle.task_id)
            worker_a.stop()
            worker_a.start()
            async with worker_a.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
                done_a = await tasks.get(client.session, handle.task_id)
            assert done_a["result"] == done_b["result"]
            assert tasks.seeds_part(done_a["result"]["structuredContent"]) == {"answer": "green"}
            assert done_a["result"]["content"][-1]["text"].startswith("Answered by dana (Slack) in Slack at ")
            answered = [q for q in await worker_b.questions() if q["question"] == text]
            assert [q["status"] for q in answered] == ["answered"]
