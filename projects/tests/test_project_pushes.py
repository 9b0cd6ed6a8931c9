"""Issue 31: live pushes reach only the people who see the project, as their role there shows it.

A dashboard of someone who answers everywhere takes the one shared push; anyone else's joins their
projects' groups and counts for itself. Programs on /ws/events/ likewise, by person or by token.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from core.consumers import RECONNECT
from dashboard.consumers import DashboardConsumer, EventsConsumer
from projects.models import Project, Role
from questions.models import Question
from testing.project_world import OPTIONS, World, make_world
from tokens.models import AgentToken

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
async def world(settings: Any) -> World:
    settings.HOOKBRIDGE_NEW_USER_ROLE = ""
    made: World = await database_sync_to_async(make_world)()
    return made


async def dashboard_of(world: World, name: str) -> tuple[WebsocketCommunicator, str]:
    """A connected dashboard, and the state it got first."""
    communicator = WebsocketCommunicator(DashboardConsumer.as_asgi(), "/ws/dashboard/")
    communicator.scope["user"] = await database_sync_to_async(User.objects.get)(username=name)
    connected, _ = await communicator.connect()
    assert connected
    return communicator, await communicator.receive_from(timeout=5)


@database_sync_to_async
def ask(world: World, project: str, text: str) -> Question:
    token = world.tokens[project]
    return Question.ask(asker=token, asker_name=token.name, text=text, options=OPTIONS)[0]


async def pushes_until(communicator: WebsocketCommunicator, needle: str) -> list[str]:
    """Every push up to and including the first that holds `needle`."""
    seen = []
    while True:
        message = await communicator.receive_from(timeout=5)
        seen.append(message)
        if needle in message:
            return seen


async def test_a_dashboard_starts_with_its_projects_only(world: World) -> None:
    viewer, state = await dashboard_of(world, "vic")
    assert "Deploy web?" in state
    assert "Deploy ops?" not in state
    assert "web plan" in state
    assert "ops plan" not in state
    await viewer.disconnect()


async def test_a_push_reaches_the_projects_people_and_nobody_else(world: World) -> None:
    answerer, _ = await dashboard_of(world, "ann")
    outsider, _ = await dashboard_of(world, "out")
    root, _ = await dashboard_of(world, "root")
    await ask(world, "ops", "Restart the ops cluster?")
    await ask(world, "web", "Ship the web release?")
    # Pushes arrive in order: the web question's card reaching the answerer means the ops card was never sent.
    for_answerer = await pushes_until(answerer, "Ship the web release?")
    assert not any("Restart the ops cluster?" in push for push in for_answerer)
    for_outsider = await pushes_until(outsider, "Restart the ops cluster?")
    assert not any("Ship the web release?" in push for push in for_outsider)
    await pushes_until(root, "Restart the ops cluster?")
    await pushes_until(root, "Ship the web release?")
    # And each partial dashboard is told its own count: one pending in ops for the outsider, two in web.
    counts = await pushes_until(outsider, 'id="pending-count"')
    assert 'class="count" hx-swap-oob="true">2</span>' in counts[-1]
    for communicator in (answerer, outsider, root):
        await communicator.disconnect()


async def test_a_viewer_gets_the_card_without_its_answer_form(world: World) -> None:
    viewer, _ = await dashboard_of(world, "vic")
    answerer, _ = await dashboard_of(world, "ann")
    question = await ask(world, "web", "Roll back the web release?")
    seen = (await pushes_until(viewer, "Roll back the web release?"))[-1]
    assert f"/questions/{question.pk}/answer" not in seen
    assert "You look on in web" in seen
    answerable = (await pushes_until(answerer, "Roll back the web release?"))[-1]
    assert f"/questions/{question.pk}/answer" in answerable
    await viewer.disconnect()
    await answerer.disconnect()


async def test_a_change_of_roles_makes_open_pages_connect_again(world: World) -> None:
    viewer, _ = await dashboard_of(world, "vic")
    await database_sync_to_async(world.ops.set_member)(world.people["vic"], Role.VIEWER)
    while True:
        output = await viewer.receive_output(timeout=5)
        if output["type"] == "websocket.close":
            break
    assert output["code"] == RECONNECT
    await viewer.disconnect()  # as daphne tells the consumer once the socket is closed
    # Connected again, the person sees the project they just joined.
    again, state = await dashboard_of(world, "vic")
    assert "Deploy ops?" in state
    await again.disconnect()


async def events_of(world: World, *, token: str | None = None, person: str | None = None) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(EventsConsumer.as_asgi(), "/ws/events/")
    if token is not None:
        found = await database_sync_to_async(AgentToken.objects.get)(pk=world.tokens[token].pk)
        communicator.scope["agent_token"] = found
    else:
        communicator.scope["user"] = await database_sync_to_async(User.objects.get)(username=person)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


@pytest.mark.parametrize(
    ("who", "mine", "theirs"), [({"token": "web-bot"}, "web", "ops"), ({"person": "out"}, "ops", "web")]
)
async def test_the_events_feed_holds_only_the_watchers_projects(
    world: World, who: dict[str, str], mine: str, theirs: str
) -> None:
    feed = await events_of(world, **who)
    queued = json.loads(await feed.receive_from(timeout=5))
    assert [q["question"] for q in queued["questions"]] == [f"Deploy {mine}?"]
    await ask(world, theirs, f"Not for you, {theirs}?")
    await ask(world, mine, f"For you, {mine}?")
    while True:
        message = json.loads(await feed.receive_from(timeout=5))
        assert "Not for you" not in json.dumps(message)
        if message["type"] == "question-received" and message["question"]["question"] == f"For you, {mine}?":
            break
    await feed.disconnect()


async def test_a_bot_for_every_project_hears_every_project(world: World) -> None:
    feed = await events_of(world, token="all-bot")
    queued = json.loads(await feed.receive_from(timeout=5))
    assert sorted(q["question"] for q in queued["questions"]) == ["Deploy ops?", "Deploy web?"]
    await feed.disconnect()


async def test_someone_who_answered_everywhere_does_not_hear_a_project_made_since(world: World) -> None:
    """Who answers in every project takes the shared pushes: a project they are not in ends that, at once."""

    def join_everything() -> None:
        world.ops.set_member(world.people["ann"], Role.ANSWERER)
        Project.default().set_member(world.people["ann"], Role.ANSWERER)

    await database_sync_to_async(join_everything)()
    everywhere, _ = await dashboard_of(world, "ann")
    secret = await database_sync_to_async(Project.objects.create)(name="secret")
    # The new project is news to every open page: it connects again, and now sees some projects only.
    while (await everywhere.receive_output(timeout=5))["type"] != "websocket.close":
        pass
    await everywhere.disconnect()
    partial, _ = await dashboard_of(world, "ann")
    token, _ = await database_sync_to_async(AgentToken.issue)("secret-agent", project=secret)
    world.tokens["secret"] = token
    await ask(world, "secret", "A secret question?")
    await ask(world, "web", "A web question?")
    seen = await pushes_until(partial, "A web question?")
    assert not any("A secret question?" in push for push in seen)
    await partial.disconnect()


async def test_a_change_of_roles_leaves_a_tokens_feed_open(world: World) -> None:
    """A program on a token sees what its token sees, whoever joins a project: its socket stays."""
    feed = await events_of(world, token="web-bot")
    await feed.receive_from(timeout=5)  # the queue
    await database_sync_to_async(world.ops.set_member)(world.people["vic"], Role.VIEWER)
    await ask(world, "web", "Still listening?")
    while True:
        output = await feed.receive_output(timeout=5)
        assert output["type"] == "websocket.send", output
        if "Still listening?" in output["text"]:
            break
    await feed.disconnect()
