"""Questions that end without an answer, as the ask's own rules end them, with no server process.

A question that times out while its call waits, and one whose agent never came back within the
re-attach window (withdrawn by the process's sweep): every open dashboard is told at once, the
call or the re-ask gets what the rules say, and a late answer is refused. These rules were checked
through a daphne process (two servers of their own); here they run in the test's loop.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.utils import timezone

from core import runtime
from dashboard.consumers import DashboardConsumer
from questions import sweeper
from questions.asking import WaitPolicy, wait_for_resolution
from questions.models import AlreadyResolved, CancelReason, Question, Status
from tokens.models import AgentToken

pytestmark = [pytest.mark.django_db(transaction=True)]


@database_sync_to_async
def ask(text: str, timeout_seconds: float | None = None) -> tuple[Question, bool]:
    token = AgentToken.objects.filter(name="agent-a").first() or AgentToken.issue("agent-a")[0]
    return Question.ask(asker=token, asker_name="agent-a", text=text, options=[], timeout_seconds=timeout_seconds)


@database_sync_to_async
def read(question: Question) -> Question:
    return Question.objects.get(pk=question.pk)


async def dashboard() -> WebsocketCommunicator:
    """A logged-in dashboard past its first state: what it receives next are pushes."""
    user = await database_sync_to_async(User.objects.create_user)("bob", password="pw-bob-12345")
    communicator = WebsocketCommunicator(DashboardConsumer.as_asgi(), "/ws/dashboard/")
    communicator.scope["user"] = user
    assert (await communicator.connect())[0]
    await communicator.receive_from()
    return communicator


async def receive_until(communicator: WebsocketCommunicator, needle: str, timeout: float = 5) -> str:
    async with asyncio.timeout(timeout):
        while True:
            message: str = await communicator.receive_from(timeout=timeout)
            if needle in message:
                return message


async def test_a_question_that_times_out_while_waited_on_leaves_every_dashboard() -> None:
    page = await dashboard()
    question, _ = await ask("Will anybody answer in time?", timeout_seconds=0.5)
    await receive_until(page, f'id="question-{question.pk}"')

    policy = WaitPolicy(slice_seconds=0.2, max_hold=10, progress_interval=None)
    resolved = await asyncio.wait_for(wait_for_resolution(question.pk, policy), 30)

    assert resolved.status == Status.TIMED_OUT
    removed = await receive_until(page, f'id="resolution-{question.pk}" class="resolution outcome-timed_out"')
    assert "timed out" in removed
    with pytest.raises(AlreadyResolved):
        await database_sync_to_async(resolved.record_answer)("too late", by_name="bob")
    assert (await read(question)).status == Status.TIMED_OUT
    await page.disconnect()


@pytest.fixture
def short_window(settings: Any) -> Any:
    """Questions whose agent stopped waiting are withdrawn after 2 s; the sweep runs every 0.5 s."""
    settings.HOOKBRIDGE_REATTACH_WINDOW = 2
    yield settings
    task = runtime.background_tasks.pop(sweeper.TASK, None)
    if task is not None:
        task.cancel()


async def test_the_sweep_withdraws_a_question_nobody_came_back_for_and_tells_every_dashboard(
    short_window: Any,
) -> None:
    assert sweeper.interval() == 0.5
    page = await dashboard()
    text = "Will anyone come back for me?"
    question, _ = await ask(text)
    await database_sync_to_async(question.agent_stopped_waiting)("the connection to the agent closed")
    left_long_ago = timezone.now() - timedelta(seconds=3)
    await database_sync_to_async(Question.objects.filter(pk=question.pk).update)(agent_left_at=left_long_ago)

    sweeper.ensure_running()
    removed = await receive_until(page, f'id="resolution-{question.pk}" class="resolution outcome-cancelled"')

    assert "did not ask again" in removed
    gone = await read(question)
    assert (gone.status, gone.cancel_reason) == (Status.CANCELLED, CancelReason.AGENT_GONE)
    with pytest.raises(AlreadyResolved, match="did not ask again"):
        await database_sync_to_async(gone.record_answer)("too late", by_name="bob")
    fresh, reattached = await ask(text)
    assert not reattached
    assert fresh.pk != question.pk, "after the window the same question is asked anew"
    await page.disconnect()
