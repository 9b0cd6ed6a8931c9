"""First run: the dashboard says how to connect an agent, and makes a token for the person on request."""

from __future__ import annotations

import re

from django.test import Client

from tokens.models import AgentToken, Scope


def test_the_empty_dashboard_names_this_servers_mcp_url(logged_in: Client) -> None:
    page = logged_in.get("/", HTTP_HOST="localhost:8123").content.decode()
    assert "Connect an agent" in page
    assert "http://localhost:8123/mcp" in page
    assert "claude mcp add --transport http hookbridge http://localhost:8123/mcp" in page


def test_it_creates_an_agent_token_shown_once(logged_in: Client) -> None:
    response = logged_in.post("/tokens/mine")
    assert response.status_code == 200
    raw = re.search(r"Bearer (hb_[\w-]+)", response.content.decode())
    assert raw, response.content.decode()
    token = AgentToken.authenticate(raw.group(1))
    assert token is not None
    assert token.scope == Scope.AGENT
    assert token.name == "alice's agent"
    assert raw.group(1) not in logged_in.get("/").content.decode(), "shown once, never again"


def test_it_needs_a_login_and_a_post(client: Client, logged_in: Client) -> None:
    assert logged_in.get("/tokens/mine").status_code == 405
    anonymous = Client().post("/tokens/mine")
    assert anonymous.status_code == 302
    assert "/accounts/login/" in anonymous["Location"]
    assert AgentToken.objects.count() == 0
