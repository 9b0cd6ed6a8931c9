"""/agents/: a person's connected agents (tokens.views.connected, tokens.views.disconnect)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model

from tokens.models import AgentToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in_client(user: User) -> AgentToken:
    """A client alice signed in, with a live access token and refresh token."""
    application = get_application_model().objects.create(
        name="Claude Code",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1:1/callback",
    )
    access = get_access_token_model().objects.create(
        user=user,
        application=application,
        token="access-token-value",
        expires=timezone.now() + timedelta(hours=1),
        scope="mcp",
        resource=["http://testserver/mcp"],
    )
    get_refresh_token_model().objects.create(
        user=user, application=application, token="refresh-token-value", access_token=access
    )
    return AgentToken.for_oauth_grant(user, application)


def test_it_needs_a_login(client: Client) -> None:
    response = client.get("/agents/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_it_lists_the_persons_own_agents_only(logged_in: Client, user: User, signed_in_client: AgentToken) -> None:
    AgentToken.issue("alice's agent", user=user)
    bob = User.objects.create_user("bob", password="pw-bob-1234")
    AgentToken.issue("bob's agent", user=bob)
    AgentToken.issue("ci-bot")  # an admin's token, nobody's own

    page = logged_in.get("/agents/").content.decode()

    assert "alice&#x27;s Claude Code" in page
    assert "signed in" in page
    assert "alice&#x27;s agent" in page
    # Bob's token by its whole name: a bare "bob" turned up inside the page's random CSRF token (a CI run).
    assert "bob&#x27;s agent" not in page
    assert "ci-bot" not in page
    assert page.count('class="agent-facts"') == 2


def test_disconnecting_a_signed_in_client_revokes_its_tokens(logged_in: Client, signed_in_client: AgentToken) -> None:
    response = logged_in.post(f"/agents/{signed_in_client.pk}/disconnect")

    assert response.status_code == 302
    signed_in_client.refresh_from_db()
    assert signed_in_client.revoked_at is not None
    assert not get_access_token_model().objects.exists()
    assert get_refresh_token_model().objects.get().revoked is not None
    assert "is disconnected" in logged_in.get("/agents/").content.decode()


def test_disconnecting_a_token_revokes_it(logged_in: Client, user: User) -> None:
    token, _ = AgentToken.issue("alice's agent", user=user)

    logged_in.post(f"/agents/{token.pk}/disconnect")

    token.refresh_from_db()
    assert token.revoked_at is not None


def test_it_refuses_to_disconnect_another_persons_agent(logged_in: Client) -> None:
    bob = User.objects.create_user("bob", password="pw-bob-1234")
    token, _ = AgentToken.issue("bob's agent", user=bob)

    response = logged_in.post(f"/agents/{token.pk}/disconnect")

    assert response.status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_it_only_disconnects_with_a_post(logged_in: Client, user: User) -> None:
    token, _ = AgentToken.issue("alice's agent", user=user)

    assert logged_in.get(f"/agents/{token.pk}/disconnect").status_code == 405


def test_a_token_made_on_the_dashboard_is_the_persons(logged_in: Client, user: User) -> None:
    logged_in.post("/tokens/mine")

    assert AgentToken.objects.get().user == user


def test_a_person_with_no_agents_is_told_of_the_command_lines_agents(logged_in: Client) -> None:
    AgentToken.issue("ci-bot")
    AgentToken.issue("nightly")
    page = logged_in.get("/agents/").content.decode()
    assert "None of yours yet." in page
    assert "2 other agents on this server were made on the command line" in page
    assert "ci-bot" not in page, "a person who is no admin sees no other agent's name"


def test_an_admin_sees_and_disconnects_the_command_lines_agents(client: Client) -> None:
    admin = User.objects.create_superuser("root", password="pw-root-1234")
    client.force_login(admin)
    token, _ = AgentToken.issue("ci-bot")
    bob = User.objects.create_user("bob", password="pw-bob-1234")
    bobs, _ = AgentToken.issue("bob's agent", user=bob)

    page = client.get("/agents/").content.decode()
    assert "Made on the command line" in page
    assert "ci-bot" in page
    assert "bob&#x27;s agent" not in page, "another person's agent is theirs to see"

    assert client.post(f"/agents/{token.pk}/disconnect").status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert client.post(f"/agents/{bobs.pk}/disconnect").status_code == 404
    bobs.refresh_from_db()
    assert bobs.revoked_at is None


def test_a_person_who_is_no_admin_cannot_disconnect_the_command_lines_agents(logged_in: Client) -> None:
    token, _ = AgentToken.issue("ci-bot")
    assert logged_in.post(f"/agents/{token.pk}/disconnect").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None
