from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, User
from django.test import Client

from lifecycle import live as lifecycle_live
from lifecycle.consumers import SessionConsumer, SessionsOverviewConsumer
from lifecycle.models import AgentSession
from tokens.models import AgentToken


@pytest.fixture
def token(db: None) -> AgentToken:
    return AgentToken.issue("agent-a")[0]


def test_the_overview_lists_sessions_newest_first_and_filters_by_project(logged_in: Client, token: AgentToken) -> None:
    AgentSession.open(token=token, name="Older", project="api")
    AgentSession.open(token=token, name="Newer", project="web")
    page = logged_in.get("/sessions/").content.decode()
    assert page.index("Newer") < page.index("Older")
    filtered = logged_in.get("/sessions/?project=api").content.decode()
    assert "Older" in filtered
    assert "Newer" not in filtered.split("<tbody")[1]


def test_the_overview_shows_each_sessions_state(logged_in: Client, token: AgentToken) -> None:
    working = AgentSession.open(token=token, name="Working one")
    working.record("progress", percent=40)
    done = AgentSession.open(token=token, name="Done one")
    done.record("complete", success=False)
    page = logged_in.get("/sessions/").content.decode()
    assert "working" in page
    assert "failed" in page


def test_new_session_shows_the_guid_and_the_mcp_configuration(logged_in: Client, token: AgentToken) -> None:
    response = logged_in.post(
        "/sessions/new", {"name": "From the dashboard", "project": "web", "token": token.pk}, follow=True
    )
    session = AgentSession.objects.get(name="From the dashboard")
    page = response.content.decode()
    assert str(session.guid) in page
    assert "/mcp/progress+maxsim" in page
    assert "Authorization: Bearer" in page
    assert session.token == token
    assert session.project_name == "web"


def test_new_session_needs_a_token(logged_in: Client, token: AgentToken) -> None:
    response = logged_in.post("/sessions/new", {"name": "No token"})
    assert response.status_code == 422
    assert not AgentSession.objects.exists()


def test_session_pages_need_a_login(client: Client, token: AgentToken) -> None:
    session = AgentSession.open(token=token)
    for path in ("/sessions/", f"/sessions/{session.guid}/", "/sessions/new"):
        assert client.get(path).status_code == 302


def test_the_session_page_renders_the_response_sanitised(logged_in: Client, token: AgentToken) -> None:
    session = AgentSession.open(token=token)
    session.record("response", content="**Done** <script>alert(1)</script>")
    page = logged_in.get(f"/sessions/{session.guid}/").content.decode()
    assert "<strong>Done</strong>" in page
    assert "<script>alert" not in page


@pytest.mark.django_db(transaction=True)
async def test_the_program_socket_refuses_anonymous_and_unknown_sessions() -> None:
    anonymous = WebsocketCommunicator(SessionConsumer.as_asgi(), "/ws/sessions/x/")
    anonymous.scope["user"] = AnonymousUser()
    anonymous.scope["url_route"] = {"kwargs": {"guid": "5f0c1c5e-4a7e-4c43-9d4c-000000000000"}}
    assert (await anonymous.connect())[0] is False

    user = await database_sync_to_async(User.objects.create_user)("bob", password="pw-bob-12345")
    unknown = WebsocketCommunicator(SessionConsumer.as_asgi(), "/ws/sessions/x/")
    unknown.scope["user"] = user
    unknown.scope["url_route"] = {"kwargs": {"guid": "5f0c1c5e-4a7e-4c43-9d4c-000000000000"}}
    connected, code = await unknown.connect()
    assert not connected
    assert code == 4404


@pytest.mark.django_db(transaction=True)
async def test_the_overview_socket_pushes_rows_for_its_project() -> None:
    user = await database_sync_to_async(User.objects.create_user)("bob", password="pw-bob-12345")
    token = await database_sync_to_async(lambda: AgentToken.issue("agent-a")[0])()
    overview = WebsocketCommunicator(SessionsOverviewConsumer.as_asgi(), "/ws/sessions/?project=web")
    overview.scope["user"] = user
    assert (await overview.connect())[0]
    await overview.receive_from()  # the current rows

    web = await database_sync_to_async(AgentSession.open)(token=token, name="Web run", project="web")
    await database_sync_to_async(AgentSession.open)(token=token, name="Api run", project="api")
    await database_sync_to_async(web.record)("progress", percent=30)
    html = ""
    while "30%" not in html:
        html = await overview.receive_from(timeout=5)
    assert 'id="session-rows" hx-swap-oob="true"' in html
    assert "Web run" in html
    assert "Api run" not in html
    await overview.disconnect()


def test_the_overview_costs_the_same_queries_for_many_sessions(
    logged_in: Client, token: AgentToken, django_assert_max_num_queries: object
) -> None:
    for n in range(30):
        AgentSession.open(token=token, name=f"Run {n}")
    with django_assert_max_num_queries(8):  # type: ignore[operator]
        assert logged_in.get("/sessions/").status_code == 200


def test_the_session_page_says_one_thing_the_final_state(logged_in: Client, token: AgentToken) -> None:
    session = AgentSession.open(token=token, name="Contradicting run")
    session.record("status", message="Verifying the build", phase="verifying")
    session.record("error", error="flaky test", recoverable=True)
    session.record("complete", success=True)
    page = logged_in.get(session.get_absolute_url()).content.decode()
    state = page.split('id="session-state"', 1)[1].split("</section>", 1)[0]
    headline = state.split('class="banner ', 1)[1].split("</p>", 1)[0]
    assert "Completed successfully" in headline
    assert state.count('class="banner') == 1, "one headline: an earlier error is history, not the state"
    assert "1 error reported on the way" in state
    assert "flaky test" in state.split('class="error-history"', 1)[1]
    assert "Verifying the build" not in state, "an old status is not shown as the current one"


def test_an_unrecoverable_error_is_the_headline_of_a_running_session(logged_in: Client, token: AgentToken) -> None:
    session = AgentSession.open(token=token, name="Broken run")
    session.record("error", error="disk full", recoverable=False)
    page = logged_in.get(session.get_absolute_url()).content.decode()
    assert 'class="banner fail" role="status">Failed: disk full' in page


def test_a_change_to_a_session_renders_nothing_until_a_page_asks(
    token: AgentToken, django_assert_num_queries: Any
) -> None:
    """A hint goes out; each open page renders itself. No page open: no timeline is rendered, no query run."""
    session = AgentSession.open(token=token, name="Long run")
    with django_assert_num_queries(0):
        lifecycle_live.session_changed(session.guid)
