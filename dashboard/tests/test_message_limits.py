"""No message the server sends is over 512 KiB: the queue goes a page at a time, a huge card is cut down.

Daphne refuses a WebSocket frame over 1 MiB and closes the socket (1011); a dashboard then reconnected
into the same state forever. These fill the queue with questions of the largest size an agent may ask.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from core.limits import MAX_MESSAGE_BYTES
from dashboard.consumers import DashboardConsumer, EventsConsumer
from questions.models import Question
from tokens.models import AgentToken

pytestmark = [pytest.mark.django_db(transaction=True)]

LARGEST = "Why is this so long? " * (settings.HOOKBRIDGE_MAX_QUESTION_LENGTH // 21)
LARGEST_OPTIONS = [
    {"value": f"v{n}" + "x" * 190, "label": f"Option {n} " + "y" * 180, "description": "z" * 2000}
    for n in range(settings.HOOKBRIDGE_MAX_OPTIONS)
]


def fill(count: int, *, options: list[dict[str, str]] | None = None) -> list[Question]:
    token = AgentToken.objects.get_or_create(name="agent-a", defaults={"token_hash": "x" * 64})[0]
    start = timezone.now()
    questions = [
        Question(
            asker=token,
            asker_name="agent-a",
            text=f"#{n} {LARGEST}",
            options=options or [],
            fingerprint=f"{n:064d}",
            created_at=start + timedelta(milliseconds=n),
        )
        for n in range(count)
    ]
    return Question.objects.bulk_create(questions)


def card_ids(html: str) -> list[str]:
    return re.findall(r'<article id="question-([0-9a-f-]+)"', html)


async def first_state(
    consumer: type[DashboardConsumer | EventsConsumer], path: str
) -> tuple[WebsocketCommunicator, str]:
    """A logged-in person's socket on `path`, and the first message it gets."""
    communicator = WebsocketCommunicator(consumer.as_asgi(), path)
    communicator.scope["user"] = await database_sync_to_async(User.objects.create_user)("bob", password="pw-bob-12345")
    connected, _ = await communicator.connect()
    assert connected
    return communicator, await communicator.receive_from(timeout=30)


async def test_the_dashboards_first_state_stays_under_the_limit_with_1000_of_the_largest_questions() -> None:
    await database_sync_to_async(fill)(1000, options=LARGEST_OPTIONS)
    communicator, state = await first_state(DashboardConsumer, "/ws/dashboard/")
    assert len(state.encode()) <= MAX_MESSAGE_BYTES
    shown = card_ids(state)
    assert 1 <= len(shown) < 1000
    assert f"{1000 - len(shown)} more waiting" in state
    assert '<span id="pending-count" class="count" hx-swap-oob="true">1000</span>' in state
    # Still open: the socket was not closed for a frame too large.
    assert await communicator.receive_nothing(timeout=0.2)
    await communicator.disconnect()


def test_the_more_control_pages_through_every_waiting_question_once(client: Client) -> None:
    made = fill(60)
    client.force_login(User.objects.create_user("bob", password="pw-bob-12345"))
    page = client.get("/").content.decode()
    seen = card_ids(page)
    while (more := re.search(r'hx-get="(/questions/pending\?after=[^"]+)"', page)) is not None:
        response = client.get(more.group(1).replace("&amp;", "&"))
        assert response.status_code == 200
        page = response.content.decode()
        assert len(response.content) <= MAX_MESSAGE_BYTES
        seen += card_ids(page)
    assert seen == [str(question.pk) for question in made]


def test_a_bad_cursor_gets_a_400_naming_it(client: Client) -> None:
    client.force_login(User.objects.create_user("bob", password="pw-bob-12345"))
    response = client.get("/questions/pending?after=nonsense")
    assert response.status_code == 400
    assert response.content.decode().startswith("after:")


def test_a_card_too_large_for_a_message_is_cut_down_with_a_link(client: Client) -> None:
    from questions import queue

    question = fill(1)[0]
    huge = [{"value": f"v{n}", "label": "L" * 200, "description": "D" * 200_000} for n in range(3)]
    Question.objects.filter(pk=question.pk).update(options=huge)
    html = queue.card_html(Question.objects.select_related("session").get(pk=question.pk))
    assert len(html.encode()) < queue.CARD_MAX_BYTES
    assert f'href="/questions/{question.pk}/"' in html
    assert "too large to show in the queue" in html


async def test_the_event_streams_queue_is_paged_with_a_count_and_where_the_rest_are() -> None:
    await database_sync_to_async(fill)(300, options=LARGEST_OPTIONS)
    communicator, raw = await first_state(EventsConsumer, "/ws/events/")
    assert len(raw.encode()) <= MAX_MESSAGE_BYTES
    queued = json.loads(raw)
    assert queued["type"] == "questions-queued"
    assert queued["total"] == 300
    assert 1 <= len(queued["questions"]) < 300
    assert queued["more"] == 300 - len(queued["questions"])
    assert queued["next"] == "/api/questions?status=pending"
    await communicator.disconnect()


def test_the_json_apis_page_ends_before_it_passes_the_limit(client: Client) -> None:
    fill(120, options=LARGEST_OPTIONS)
    _, secret = AgentToken.issue("bot", scope="answer")
    response = client.get("/api/questions?limit=500", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert response.status_code == 200
    assert len(response.content) <= MAX_MESSAGE_BYTES
    body = response.json()
    assert 1 <= len(body["questions"]) < 120
    assert body["next"] is not None
    rest = client.get(body["next"], HTTP_AUTHORIZATION=f"Bearer {secret}").json()
    assert rest["questions"][0]["id"] != body["questions"][-1]["id"]
