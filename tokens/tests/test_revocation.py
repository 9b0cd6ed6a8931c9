"""Issue 37: access taken away is gone at once, everywhere: HTTP, MCP's OAuth path and open sockets.

Revoking or deleting a token, removing a member, demoting or deactivating a person: each is tried
through the path people use (the admin, the model's own methods, the project command's model calls)
and checked where an agent or a page would notice (the JSON API, the OAuth authentication /mcp runs,
a socket through the whole ASGI stack).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from core.consumers import RECONNECT, REVOKED
from dashboard.consumers import DashboardConsumer
from hookbridge_site.asgi import application
from projects.models import Project, Role
from testing.oauth import RESOURCE, allow, authorization, exchange, pkce, register
from testing.project_world import World, as_, make_world
from tokens import oauth
from tokens.models import AgentToken, Scope


def bearer(raw: str) -> dict[str, Any]:
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def signed_in_agent(person: User, project: Project) -> tuple[str, str]:
    """A person approves an MCP client for `project` in a browser: (access token, "client_id refresh_token")."""
    browser = Client()
    browser.force_login(person)
    client_id = register(browser)["client_id"]
    verifier, challenge = pkce()
    params = authorization(client_id, challenge)
    code = allow(browser, {**params, "project": str(project.pk)})
    issued = exchange(browser, client_id, code, verifier).json()
    return issued["access_token"], f"{client_id} {issued['refresh_token']}"


def refresh(grant: str) -> int:
    """The token endpoint's status for a refresh with `grant` ("client_id refresh_token")."""
    client_id, raw = grant.split()
    response = Client().post(
        "/oauth/token/",
        {"grant_type": "refresh_token", "refresh_token": raw, "client_id": client_id, "resource": RESOURCE},
    )
    return response.status_code


@pytest.fixture
def ann_agent(world: World) -> tuple[AgentToken, str, str]:
    """ann (an answerer of web) signed her Claude Code in, for web: (its agent, access token, refresh token)."""
    access, refresh_raw = signed_in_agent(world.people["ann"], world.web)
    agent = oauth.authenticate(access, RESOURCE)
    assert agent is not None
    assert agent.project_id == world.web.pk
    return agent, access, refresh_raw


@pytest.mark.django_db
def test_an_oauth_agent_whose_token_is_revoked_is_refused_and_never_made_again(
    ann_agent: tuple[AgentToken, str, str],
) -> None:
    agent, access, _ = ann_agent
    # Revoked as the admin's change page does it: only the row's revoked_at.
    agent.revoked_at = timezone.now()
    agent.save()
    assert oauth.authenticate(access, RESOURCE) is None
    assert AgentToken.objects.filter(oauth_client=agent.oauth_client).count() == 1, "no new agent elsewhere"


@pytest.mark.django_db
def test_an_oauth_agent_whose_token_is_deleted_is_refused_and_its_grant_revoked(
    ann_agent: tuple[AgentToken, str, str],
) -> None:
    agent, access, refresh_raw = ann_agent
    client = agent.oauth_client
    agent.delete()
    assert oauth.authenticate(access, RESOURCE) is None
    assert not AgentToken.objects.filter(oauth_client=client).exists()
    assert refresh(refresh_raw) == 400


@pytest.mark.django_db
def test_an_oauth_agent_past_its_expiry_is_refused(ann_agent: tuple[AgentToken, str, str]) -> None:
    agent, access, _ = ann_agent
    AgentToken.objects.filter(pk=agent.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert oauth.authenticate(access, RESOURCE) is None
    assert AgentToken.objects.filter(oauth_client=agent.oauth_client).count() == 1


@pytest.mark.django_db
def test_a_token_issued_before_the_agent_was_made_again_stays_refused(
    world: World, ann_agent: tuple[AgentToken, str, str]
) -> None:
    agent, old_access, _ = ann_agent
    AgentToken.objects.filter(pk=agent.pk).update(revoked_at=timezone.now())  # no signal: the grant kept its tokens
    again = AgentToken.for_oauth_grant(world.people["ann"], agent.oauth_client, world.web)
    assert again.pk != agent.pk
    assert oauth.authenticate(old_access, RESOURCE) is None


@pytest.mark.django_db
def test_a_person_removed_from_a_project_loses_their_tokens_and_grants_there(
    world: World, ann_agent: tuple[AgentToken, str, str], client: Client
) -> None:
    agent, access, refresh_raw = ann_agent
    ann = world.people["ann"]
    own, own_raw = AgentToken.issue("ann's script", user=ann, project=world.web)
    elsewhere, elsewhere_raw = AgentToken.issue("ann's ops script", user=ann, project=world.ops)
    assert client.get("/api/questions", **bearer(own_raw)).status_code == 200

    assert world.web.remove_member(ann)

    assert client.get("/api/questions", **bearer(own_raw)).status_code == 401
    assert oauth.authenticate(access, RESOURCE) is None
    assert refresh(refresh_raw) == 400
    assert not AgentToken.objects.get(pk=own.pk).is_active
    assert not AgentToken.objects.get(pk=agent.pk).is_active
    assert AgentToken.objects.get(pk=elsewhere.pk).is_active, "another project's token is not this membership's"
    assert client.get("/api/questions", **bearer(elsewhere_raw)).status_code == 200


@pytest.mark.django_db
def test_a_person_made_a_viewer_loses_the_tokens_they_may_no_longer_make(world: World, client: Client) -> None:
    ann = world.people["ann"]
    _, raw = AgentToken.issue("ann's bot", scope=Scope.ANSWER, user=ann, project=world.web)
    assert client.get("/api/questions", **bearer(raw)).status_code == 200
    world.web.set_member(ann, Role.VIEWER)
    assert client.get("/api/questions", **bearer(raw)).status_code == 401


@pytest.mark.django_db
def test_a_deactivated_persons_tokens_and_grants_stop_at_once(
    world: World, ann_agent: tuple[AgentToken, str, str], client: Client
) -> None:
    _, access, refresh_raw = ann_agent
    ann = world.people["ann"]
    _, raw = AgentToken.issue("ann's bot", scope=Scope.ANSWER, user=ann, project=world.web)
    assert client.get("/api/questions", **bearer(raw)).status_code == 200
    page = as_(world, "ann")
    assert page.get("/").status_code == 200

    ann.is_active = False
    ann.save()

    assert client.get("/api/questions", **bearer(raw)).status_code == 401
    assert oauth.authenticate(access, RESOURCE) is None
    assert refresh(refresh_raw) == 400
    assert page.get("/").status_code == 302, "her browser's session is signed out"


@pytest.mark.django_db
def test_a_person_deactivated_without_signals_is_still_refused(world: World, client: Client) -> None:
    ann = world.people["ann"]
    _, raw = AgentToken.issue("ann's bot", scope=Scope.ANSWER, user=ann, project=world.web)
    User.objects.filter(pk=ann.pk).update(is_active=False)  # a bulk update sends no signal
    assert client.get("/api/questions", **bearer(raw)).status_code == 401


@pytest.mark.django_db
def test_a_demoted_superuser_loses_their_tokens_for_every_project(world: World, client: Client) -> None:
    root = world.people["root"]
    _, everywhere = AgentToken.issue("root's bot", scope=Scope.ANSWER, user=root, all_projects=True)
    _, default_only = AgentToken.issue("root's default bot", scope=Scope.ANSWER, user=root)
    root.is_superuser = False
    root.save()
    assert client.get("/api/questions", **bearer(everywhere)).status_code == 401
    assert client.get("/api/questions", **bearer(default_only)).status_code == 200, "still the default's admin"


@pytest.mark.django_db
def test_a_viewer_in_a_project_cannot_revoke_its_tokens_from_the_admin_list(world: World) -> None:
    """Issue 37, hole 2: staff who is admin in ops and viewer in web."""
    adm = world.people["adm"]
    world.web.set_member(adm, Role.VIEWER)
    world.ops.set_member(adm, Role.ADMIN)
    web_agent, ops_agent = world.tokens["web"], world.tokens["ops"]
    page = as_(world, "adm")
    response = page.post(
        "/admin/tokens/agenttoken/",
        {"action": "revoke", "_selected_action": [web_agent.pk, ops_agent.pk]},
    )
    assert response.status_code == 302
    assert AgentToken.objects.get(pk=web_agent.pk).is_active
    assert not AgentToken.objects.get(pk=ops_agent.pk).is_active


# Sockets: through the whole ASGI stack for tokens, the dashboard's consumer for people.


@pytest.fixture
async def cast(settings: Any) -> World:
    settings.HOOKBRIDGE_NEW_USER_ROLE = ""
    made: World = await database_sync_to_async(make_world)()
    return made


async def closes_with(communicator: WebsocketCommunicator) -> int:
    """The code the server closed the socket with; then the client's side of the close, as a browser sends it
    (the consumer's disconnect runs: a page left counted would stay counted for the tests after this one)."""
    while True:
        output = await communicator.receive_output(timeout=5)
        if output["type"] == "websocket.close":
            await communicator.disconnect()
            return int(output.get("code", 1000))


def events_socket(raw: str) -> WebsocketCommunicator:
    headers = [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {raw}".encode())]
    return WebsocketCommunicator(application, "/ws/events/", headers=headers)


async def person_dashboard(name: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(DashboardConsumer.as_asgi(), "/ws/dashboard/")
    communicator.scope["user"] = await database_sync_to_async(User.objects.get)(username=name)
    connected, _ = await communicator.connect()
    assert connected
    await communicator.receive_from(timeout=5)  # the state on connect
    return communicator


async def still_open(communicator: WebsocketCommunicator, seconds: float = 0.5) -> bool:
    """Whether the socket stays open for `seconds`, whatever pushes it gets meanwhile."""
    # receive_output's own timeout would cancel the application: wait with receive_nothing instead.
    while not await communicator.receive_nothing(timeout=seconds):
        if (await communicator.receive_output())["type"] == "websocket.close":
            return False
    return True


@pytest.mark.django_db(transaction=True)
async def test_a_revoked_answer_tokens_event_socket_closes_saying_so(cast: World) -> None:
    communicator = events_socket(cast.raw["web-bot"])
    connected, _ = await communicator.connect()
    assert connected
    await database_sync_to_async(cast.tokens["web-bot"].revoke)()
    assert await closes_with(communicator) == REVOKED
    connected, code = await events_socket(cast.raw["web-bot"]).connect()
    assert (connected, code) == (False, 4401)


@pytest.mark.django_db(transaction=True)
async def test_a_deactivated_persons_dashboard_closes_saying_so(cast: World) -> None:
    ann, others = await person_dashboard("ann"), await person_dashboard("adm")

    def deactivate() -> None:
        ann_user = User.objects.get(username="ann")
        ann_user.is_active = False
        ann_user.save()

    await database_sync_to_async(deactivate)()
    assert await closes_with(ann) == REVOKED
    assert await still_open(others), "another person's page stays open"
    await others.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_demoted_superusers_dashboard_reconnects_to_see_only_their_projects(cast: World) -> None:
    root = await person_dashboard("root")

    def demote() -> None:
        user = User.objects.get(username="root")
        user.is_superuser = False
        user.save()

    await database_sync_to_async(demote)()
    assert await closes_with(root) == RECONNECT
