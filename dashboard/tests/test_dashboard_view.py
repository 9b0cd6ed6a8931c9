from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from dashboard import state
from hooks.config import discovered
from lifecycle.models import AgentSession
from projects import access
from questions.kinds import Kind
from questions.models import Question
from testing.hook_world import plugin
from testing.html import assert_inert
from testing.project_world import World, as_
from tokens.models import AgentToken


def test_it_lists_pending_questions_oldest_first(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    token = agent[0]
    for text in ("First?", "Second?", "Third?"):
        Question.ask(asker=token, asker_name=token.name, text=text, options=[])
    answered = Question.ask(asker=token, asker_name=token.name, text="Answered already?", options=[])[0]
    answered.record_answer("yes", by_token=token)

    page = logged_in.get("/").content.decode()
    assert page.index("First?") < page.index("Second?") < page.index("Third?")
    assert "Answered already?" not in page
    assert 'id="pending-count" class="count" >3<' in page.replace("\n", "")


def test_a_destructive_command_carries_a_warning_in_words(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    """Issue 42: a shell command on HOOKBRIDGE_DESTRUCTIVE_COMMANDS says so on its card; a harmless one does not."""
    token = agent[0]
    for command in ("rm -rf build && git push --force origin main", "npm test"):
        payload = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": "/home/dev/shop"}
        Question.ask(asker=token, asker_name=token.name, text=command, options=[], kind=Kind.APPROVAL, payload=payload)
    page = logged_in.get("/").content.decode()
    warnings = page.count('class="destructive"')
    assert warnings == 1
    warning = page[page.index('class="destructive"') : page.index("</p>", page.index('class="destructive"'))]
    assert "Cannot be undone:" in warning
    assert "<code>rm -rf</code>, <code>git push --force</code>" in warning
    assert page.count("<code>/home/dev/shop</code>") == 2, "each command shows where it runs"


def test_it_renders_agent_markdown_inert(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    token = agent[0]
    text = "**Bold** <script>alert(1)</script> [click](javascript:alert(2)) <img src=x onerror=alert(3)>"
    Question.ask(asker=token, asker_name=token.name, text=text, options=[])
    page = logged_in.get("/").content.decode()
    card = page[page.index('<div class="markdown">') : page.index("</article>")]
    assert "<strong>Bold</strong>" in card
    assert_inert(card)


def test_it_sends_csrf_once_on_the_body_and_serves_htmx_locally(logged_in: Client) -> None:
    page = logged_in.get("/").content.decode()
    assert 'hx-headers=\'{"X-CSRFToken":' in page
    assert "/static/vendor/htmx-2.0.11.min.js" in page
    assert "unpkg" not in page
    # Nothing loaded from another host (a bare "cdn" also matched the page's random CSRF token, now and then).
    assert re.findall(r'(?:src|href)="(?:https?:)?//', page) == []
    assert 'ws-connect="/ws/dashboard/"' in page


def test_it_needs_a_login(client: Client, db: None) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"


def test_the_empty_dashboard_offers_a_sample_question(logged_in: Client) -> None:
    page = logged_in.get("/").content.decode()
    assert 'hx-post="/questions/sample"' in page
    assert "Send a sample question" in page


def test_a_sample_question_is_a_real_pending_question_from_the_demo_agent(logged_in: Client) -> None:
    assert logged_in.post("/questions/sample").status_code == 204
    assert logged_in.post("/questions/sample").status_code == 204
    samples = list(Question.objects.pending().filter(asker_name="Demo agent"))
    assert len(samples) == 2, "each click asks anew, even the same words"
    assert [option["value"] for option in samples[0].options] == ["postgres", "sqlite"]
    assert "A sample question" in logged_in.get("/").content.decode()


def test_a_sample_question_needs_a_login_and_a_post(client: Client, logged_in: Client) -> None:
    assert logged_in.get("/questions/sample").status_code == 405
    logged_in.logout()
    response = client.post("/questions/sample")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert not Question.objects.exists()


@pytest.mark.parametrize("with_plugin", [False, True])
def test_the_hook_runs_section_shows_only_with_hook_plugins(
    logged_in: Client, settings: Any, tmp_path: Path, with_plugin: bool
) -> None:
    if with_plugin:
        plugin(tmp_path, "p", {"hooks": {"lint": {"command": "make lint"}}})
    settings.HOOKBRIDGE_PLUGINS_DIR = tmp_path
    settings.HOOKBRIDGE_CLAUDE_PLUGINS = False
    discovered.cache_clear()
    try:
        page = logged_in.get("/").content.decode()
    finally:
        discovered.cache_clear()
    hidden = '<section class="hook-runs-section" aria-labelledby="hook-runs-title" hidden>' in page
    assert 'aria-labelledby="hook-runs-title"' in page
    assert hidden is not with_plugin


@pytest.mark.django_db
def test_the_filters_offer_real_projects_and_agents_that_asked_never_session_labels_or_answer_tokens(
    world: World,
) -> None:
    """Issue 55, points 1 and 10: the Project filter offered the sessions' own labels ("web-app"), and the Agent
    filter every token, an answer token and one that never connected among them."""
    AgentToken.issue("claude-code", project=world.web)  # never connected, never asked
    labelled = AgentSession.open(token=world.tokens["web"], name="api run", project="api")
    Question.ask(asker=world.tokens["web"], asker_name="web-agent", text="Which API?", options=[], session=labelled)
    everything = state.filter_choices()
    assert "web" in everything["projects"]
    assert "ops" in everything["projects"]
    assert "api" not in everything["projects"]
    assert "web-app" not in everything["projects"]
    assert everything["agents"] == ["ops-agent", "web-agent"]
    ann_sees = state.filter_choices(access.of_user(world.people["ann"]))
    assert ann_sees["projects"] == ["web"]
    assert ann_sees["agents"] == ["web-agent"]


@pytest.mark.django_db
def test_a_card_carries_its_projects_name_and_its_sessions_label_as_the_folder(world: World) -> None:
    labelled = AgentSession.open(token=world.tokens["web"], name="api run", project="api")
    question = Question.ask(
        asker=world.tokens["web"], asker_name="web-agent", text="Which API?", options=[], session=labelled
    )[0]
    page = as_(world, "ann").get("/").content.decode()
    card = page[page.index(f'id="question-{question.pk}"') :].split(">", 1)[0]
    assert 'data-project="web"' in card
    assert 'data-folder="api"' in card
