"""The dashboard WebSocket: who may connect, the state on connect, and the pushes that follow."""

from __future__ import annotations

import asyncio
import threading

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core import broadcast, db
from core.broadcast import DASHBOARD_GROUP
from core.compat.daphne import SOCKET_CLOSED
from dashboard.consumers import DashboardConsumer
from lifecycle.models import LifecycleEvent
from questions.models import CancelReason, Question
from tokens.models import AgentToken

pytestmark = [pytest.mark.django_db(transaction=True)]


def connect_as(user: object) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(DashboardConsumer.as_asgi(), "/ws/dashboard/")
    communicator.scope["user"] = user
    return communicator


@database_sync_to_async
def ask(text: str) -> Question:
    token = AgentToken.objects.get_or_create(name="agent-a", defaults={"token_hash": "x" * 64})[0]
    return Question.ask(asker=token, asker_name="agent-a", text=text, options=[])[0]


async def test_it_refuses_an_anonymous_visitor() -> None:
    communicator = connect_as(AnonymousUser())
    connected, code = await communicator.connect()
    assert not connected
    assert code == 4401


async def test_it_sends_the_current_state_on_connect() -> None:
    user = await database_sync_to_async(User.objects.create_user)("bob", password="pw-bob-12345")
    await ask("Already waiting?")
    await database_sync_to_async(LifecycleEvent.record)(
        asker=None, asker_name="agent-a", event_type="plan-started", phase_name="Plan B"
    )
    communicator = connect_as(user)
    connected, _ = await communicator.connect()
    assert connected
    state = await communicator.receive_from()
    assert '<div id="question-list" hx-swap-oob="true">' in state
    assert "Already waiting?" in state
    assert 'id="status-bar"' in state
    assert "Plan B" in state
    await communicator.disconnect()


async def next_but_the_status_bar(communicator: WebsocketCommunicator) -> str:
    """The next push that is not the status bar's (which follows every question asked or ended)."""
    while True:
        message: str = await communicator.receive_from(timeout=5)
        if 'id="status-bar"' not in message:
            return message


async def test_it_pushes_new_and_resolved_questions() -> None:
    user = await database_sync_to_async(User.objects.create_user)("bob", password="pw-bob-12345")
    communicator = connect_as(user)
    await communicator.connect()
    await communicator.receive_from()  # initial state

    question = await ask("Pushed to me?")
    added = await next_but_the_status_bar(communicator)
    assert f'id="question-{question.pk}"' in added
    assert "beforeend:#question-list" in added
    assert "Pushed to me?" in added

    await database_sync_to_async(question.cancel)(CancelReason.CLIENT_DISCONNECTED)
    removed = await next_but_the_status_bar(communicator)
    assert (
        f'<p id="resolution-{question.pk}" class="resolution outcome-cancelled" role="status" hx-swap-oob="true">'
        in removed
    )
    assert "client disconnected" in removed
    await communicator.disconnect()


@database_sync_to_async
def queries_of_an_ask(text: str) -> list[str]:
    """The SQL an ask runs, its on-commit receivers (the pushes' renders) included."""
    with CaptureQueriesContext(connection) as captured:
        ask.func(text)  # the sync function under database_sync_to_async
    return [query["sql"] for query in captured.captured_queries]


async def test_a_question_asked_while_no_page_is_open_renders_nothing_and_a_page_opened_after_shows_it() -> None:
    # Issue 60: a card rendered for nobody was a third of an ask's time on a worker nobody watched. Rendering
    # the card counts the pending questions and looks for the project's viewers; nothing else in an ask does.
    assert not broadcast.dashboards_heard(), "no page is open here nor in another local process on this database"
    quiet = await queries_of_an_ask("Asked while nobody watched?")
    assert not [sql for sql in quiet if "projects_membership" in sql]

    user = await database_sync_to_async(User.objects.create_user)("bob", password="pw-bob-12345")
    communicator = connect_as(user)
    assert (await communicator.connect())[0]
    state = await communicator.receive_from()
    assert "Asked while nobody watched?" in state, "a page opened after the ask shows it"
    watched = await queries_of_an_ask("Asked while bob watched?")
    assert [sql for sql in watched if "projects_membership" in sql], "with a page open the card is rendered"
    assert "Asked while bob watched?" in await next_but_the_status_bar(communicator)
    await communicator.disconnect()


async def test_a_pushed_hypothesis_card_carries_its_scale() -> None:
    user = await database_sync_to_async(User.objects.create_user)("bob", password="pw-bob-12345")
    communicator = connect_as(user)
    await communicator.connect()
    await communicator.receive_from()

    @database_sync_to_async
    def ask_hypothesis() -> Question:
        payload = {"title": "Rate me", "description": "d", "hypotheses": ["one", "two"]}
        return Question.ask(asker=None, asker_name="x", text="Rate me", options=[], kind="hypothesis", payload=payload)[
            0
        ]

    await ask_hypothesis()
    added = await next_but_the_status_bar(communicator)
    assert added.count('type="radio"') == 14
    assert "Fully agree" in added
    await communicator.disconnect()


async def connected_past_its_state() -> WebsocketCommunicator:
    """A logged-in dashboard that has had its current state: what follows are pushes."""
    user = await database_sync_to_async(User.objects.create_user)("bob", password="pw-bob-12345")
    communicator = connect_as(user)
    assert (await communicator.connect())[0]
    await communicator.receive_from()  # the current state
    return communicator


async def test_a_burst_of_pushes_reaches_the_dashboard_whole() -> None:
    """100 agents asking at once queue hundreds of pushes; a full channel would drop them silently."""
    communicator = await connected_past_its_state()
    layer = get_channel_layer()
    for n in range(300):
        await layer.group_send(DASHBOARD_GROUP, {"type": "dashboard.html", "html": f"<p>push {n}</p>"})
    received = [await communicator.receive_from() for _ in range(300)]
    assert received == [f"<p>push {n}</p>" for n in range(300)]
    await communicator.disconnect()


async def test_a_push_does_not_wait_for_the_database_thread() -> None:
    """Channels' dispatch would first take a turn on the database thread, behind every MCP tool's query."""
    communicator = await connected_past_its_state()
    held, taken = threading.Event(), threading.Event()

    def hold_the_thread() -> None:
        taken.set()
        held.wait(60)

    busy = asyncio.create_task(db.database_sync_to_async(hold_the_thread)())
    await asyncio.to_thread(taken.wait, 30)  # the database thread is now taken, until the push has arrived
    await get_channel_layer().group_send(DASHBOARD_GROUP, {"type": "dashboard.html", "html": "<p>now</p>"})
    assert await communicator.receive_from(timeout=30) == "<p>now</p>"
    assert not busy.done(), "the push came only once the database thread was free"
    held.set()
    await busy
    await communicator.disconnect()


async def test_a_push_to_a_socket_that_just_closed_is_dropped_quietly() -> None:
    """daphne raises on a send after the close; a push on its way as a page goes away is nothing to log."""
    consumer = DashboardConsumer()
    consumer.scope = {"type": "websocket", "path": "/ws/dashboard/"}
    sent: list[dict[str, object]] = []

    async def closed(message: dict[str, object]) -> None:
        sent.append(message)
        raise SOCKET_CLOSED[0]("Attempt to send on a closed protocol")

    consumer.base_send = closed
    await consumer.send(text_data="<p>too late</p>")
    assert sent == [{"type": "websocket.send", "text": "<p>too late</p>"}]
