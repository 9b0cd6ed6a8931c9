"""Team mode, issue 37: a worker killed while it posts to Slack; every question is posted once and updated once.

Two daphne workers on the real PostgreSQL and Redis (testing/team.py), a fake of Slack's Web API that takes
two seconds a call and keeps what was posted even when the caller dies before its answer (as Slack does).
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter

import httpx2

from testing.fakes import fake_slack
from testing.team import two_workers

COUNT = 6


def wait_until(condition: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s: {what}")


async def test_a_worker_killed_mid_post_leaves_every_question_posted_once_and_updated_once() -> None:
    with fake_slack() as slack:
        slack.delay = 2.0
        env = {
            "HOOKBRIDGE_SLACK_BOT_TOKEN": "xoxb-team", "HOOKBRIDGE_SLACK_SIGNING_SECRET": "team-secret",
            # By its ID: a taker-over looks the channel's history up (a name is looked up once a post told its ID).
            "HOOKBRIDGE_SLACK_CHANNEL": "C0TEAMAGENTS", "HOOKBRIDGE_SLACK_API_URL": slack.url,
            "HOOKBRIDGE_NOTIFY": "slack@0s", "HOOKBRIDGE_MAX_HOLD": "120",
        }  # fmt: skip
        with two_workers(**env) as (doomed, survivor):
            # A worker starts its senders with its first request (behind a proxy, traffic reaches every worker).
            async with httpx2.AsyncClient() as http:
                for worker in (doomed, survivor):
                    assert (await http.get(f"{worker.url}/accounts/login/")).status_code == 200
            async with survivor.mcp("legacy") as client:
                texts = [f"Team notify {n}: go?" for n in range(COUNT)]
                calls = [asyncio.create_task(client.call_tool("ask_question", {"question": t})) for t in texts]
                # Two posts at once are the two workers' (a worker's Slack sender posts one at a time, 2 s each):
                # kill one of them mid-post.
                await asyncio.to_thread(wait_until, lambda: slack.in_flight >= 2, 20, "two posts under way at once")
                killed_at = time.monotonic()
                doomed.stop(signal.SIGKILL)

                def every_question_posted() -> bool:
                    return len({m["metadata"]["event_payload"]["step"] for m in slack.messages}) >= COUNT

                await asyncio.to_thread(wait_until, every_question_posted, 60, "every question posted")
                took = time.monotonic() - killed_at
                # The dead worker's message went out before it died (Slack keeps it): its step is taken over
                # when its lease lapses, which may be after every other question is posted.
                looked_for = lambda: slack.calls_of("conversations.history")  # noqa: E731
                await asyncio.to_thread(wait_until, looked_for, 30, "the dead worker's post in flight looked for")
                await asyncio.sleep(3)  # a second post of the same step would have shown by now
                steps = Counter(m["metadata"]["event_payload"]["step"] for m in slack.messages)
                assert len(slack.messages) == COUNT, f"posted twice: {steps}"
                assert took < 40, f"the killed worker's steps went out {took:.0f} s after it died"

                for text in texts:
                    question = await survivor.wait_for_question(text)
                    response = await survivor.answer_via_api(question["id"], "yes")
                    assert response.status_code == 200, response.text
                results = await asyncio.wait_for(asyncio.gather(*calls), 30)
            assert all(result.structured_content == {"answer": "yes"} for result in results)
            await asyncio.to_thread(slack.wait_for, "chat.update", COUNT, 60)
            await asyncio.sleep(3)
            updated = Counter(update["ts"] for update in slack.calls_of("chat.update"))
            assert set(updated) == {m["ts"] for m in slack.messages}, "every posted message got its update"
            assert set(updated.values()) == {1}, f"updated more than once: {updated}"
