"""Reaching people against a real daphne process (issue 30): Slack and e-mail on their schedule, answered there.

The fake Slack Web API and the mail sink are started by the tests (testing/fakes.py); the requests Slack would
send are signed with the real scheme. Team mode: two workers on PostgreSQL and Redis post each question once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from testing.fakes import FakeSlack, MailSink, fake_slack, mail_sink, notify_env, slack_press
from testing.live import LiveServer, free_port
from testing.team import two_workers


def notified(steps: str) -> Iterator[tuple[LiveServer, FakeSlack, MailSink]]:
    with fake_slack() as slack, mail_sink() as mails:
        port = free_port()
        server = LiveServer(env_overrides=notify_env(slack, mails, steps, port), port=port)
        server.setup()
        try:
            yield server, slack, mails
        finally:
            server.close()


@pytest.fixture
def notifying() -> Iterator[tuple[LiveServer, FakeSlack, MailSink]]:
    yield from notified("slack@0s,email@2s")


@pytest.fixture
def notifying_later() -> Iterator[tuple[LiveServer, FakeSlack, MailSink]]:
    """The e-mail a minute after Slack: a question answered on Slack is answered before the mail is due, however
    slow the machine."""
    yield from notified("slack@0s,email@60s")


async def press(server: LiveServer, slack: FakeSlack, index: int, choice_label: str, *, at: int | None = None) -> Any:
    return await slack_press(server.url, slack, index, choice_label, at=at)


async def test_a_question_reaches_slack_and_a_button_press_answers_the_agent(
    notifying_later: tuple[LiveServer, FakeSlack, MailSink],
) -> None:
    server, slack, mails = notifying_later
    text = "Slack: which **colour** for the logo?"
    options = [{"value": "blue", "label": "Blue"}, {"value": "green", "label": "Green"}]
    async with server.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text, "options": options}))
        (posted,) = await asyncio.to_thread(slack.wait_for, "chat.postMessage")
        assert posted["channel"] == "#agents"
        assert "which *colour* for the logo?" in json.dumps(posted["blocks"])
        stale = await press(server, slack, 0, "Green", at=int(time.time()) - 600)
        assert stale.status_code == 401, "a replayed press is refused"
        response = await press(server, slack, 0, "Green")
        assert response.status_code == 200, response.text
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {"answer": "green"}
    (updated,) = await asyncio.to_thread(slack.wait_for, "chat.update")
    assert "Answered by *dana (Slack)*: Green" in json.dumps(updated["blocks"])
    assert (updated["channel"], updated["ts"]) == (slack.posted[0]["channel"], slack.posted[0]["ts"])
    steps = server.manage(
        "shell", "-c", "from notify.models import Delivery; print(list(Delivery.objects.filter(channel='email')"
        ".values_list('status', flat=True)))",
    )  # fmt: skip
    assert steps.strip().splitlines()[-1] == "['skipped']", "answered before its time: the mail step is dropped"
    assert mails.mails == []
    late = await press(server, slack, 0, "Blue")
    assert late.status_code == 200
    (told,) = await asyncio.to_thread(slack.wait_for, "chat.postEphemeral")
    assert "answered by dana (Slack)" in told["text"]


async def test_an_unanswered_question_is_mailed_after_its_delay_and_the_mails_link_answers_it(
    notifying: tuple[LiveServer, FakeSlack, MailSink],
) -> None:
    server, _, mails = notifying
    text = "Mail: what should the release be called?"
    async with server.mcp("legacy") as client:
        started = time.monotonic()
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        (mail,) = await asyncio.to_thread(mails.wait_for, 1, 10)
        assert time.monotonic() - started >= 1.5, "the e-mail step waits its two seconds"
        assert mail["To"] == "lead@example.com"
        body = mail.get_body(("plain",)).get_content()  # type: ignore[union-attr]
        link = re.search(r"Answer it here: (\S+)", body)
        assert link is not None
        async with httpx2.AsyncClient(follow_redirects=False, timeout=60) as phone:  # a phone: no login, no cookies
            page = await phone.get(link.group(1))
            assert page.status_code == 200
            assert "Mail: what should the release be called?" in page.text
            csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
            assert csrf is not None
            sent = await phone.post(
                link.group(1) + "answer", data={"csrfmiddlewaretoken": csrf.group(1), "answer": "Hook Bridge 2.0"},
                headers={"Referer": link.group(1)},
            )  # fmt: skip
            assert sent.status_code == 200, sent.text[:500]
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {"answer": "Hook Bridge 2.0"}
    answered = await server.wait_for_question(text, status="answered")
    assert answered["answer"]["answeredBy"] == "lead@example.com (via link)"
    await asyncio.sleep(1.5)
    assert len(mails.mails) == 1, "each step once"


async def test_a_restart_between_the_ask_and_the_mail_still_sends_it_once() -> None:
    with fake_slack() as slack, mail_sink() as mails:
        port = free_port()
        server = LiveServer(env_overrides=notify_env(slack, mails, "email@3s", port), port=port)
        server.setup()
        try:
            text = "Restart: who signs off the release?"

            async def agent() -> None:
                async with server.mcp("2026-07-28") as client:
                    await client.call_tool("ask_question", {"question": text})

            call = asyncio.create_task(agent())
            await server.wait_for_question(text)
            server.stop()  # before the e-mail step is due
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(call, 30)  # the agent's connection went with the server
            assert mails.mails == []
            server.start()
            async with httpx2.AsyncClient(timeout=60) as http:  # the first request starts the worker's dispatcher
                await http.get(f"{server.url}/accounts/login/")
            (mail,) = await asyncio.to_thread(mails.wait_for, 1, 15)
            assert "Restart: who signs off the release?" in mail.get_body(("plain",)).get_content()  # type: ignore[union-attr]
            await asyncio.sleep(2)
            assert len(mails.mails) == 1
        finally:
            server.close()


@pytest.fixture
def team_notifying() -> Iterator[tuple[LiveServer, LiveServer, FakeSlack]]:
    with (
        fake_slack() as slack,
        mail_sink() as mails,
        two_workers(**notify_env(slack, mails, "slack@0s")) as (first, second),
    ):
        yield first, second, slack


@pytest.mark.team
async def test_two_workers_post_each_question_to_slack_once(
    team_notifying: tuple[LiveServer, LiveServer, FakeSlack],
) -> None:
    first, second, slack = team_notifying
    async with httpx2.AsyncClient(timeout=60) as http:  # both workers' dispatchers run
        await http.get(f"{first.url}/accounts/login/")
        await http.get(f"{second.url}/accounts/login/")
    texts = [f"Team: question {n}?" for n in range(6)]
    async with first.mcp("legacy") as client:
        calls = [asyncio.create_task(client.call_tool("ask_question", {"question": t})) for t in texts]
        await asyncio.to_thread(slack.wait_for, "chat.postMessage", 6)
        await asyncio.sleep(3)  # both workers poll past their next round: nothing more goes out
        posted = slack.calls_of("chat.postMessage")
        assert len(posted) == 6, [p["text"] for p in posted]
        assert sorted(p["text"].split(": ", 1)[1] for p in posted) == sorted(texts)
        for text in texts:
            question = await first.wait_for_question(text)
            await second.answer_via_api(question["id"], "done")
        await asyncio.wait_for(asyncio.gather(*calls), 30)
    await asyncio.to_thread(slack.wait_for, "chat.update", 6)
    await asyncio.sleep(2)
    assert len(slack.calls_of("chat.update")) == 6, "each message updated once"
