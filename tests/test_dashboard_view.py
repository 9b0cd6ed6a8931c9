from __future__ import annotations

from django.test import Client

from questions.models import Question
from tests.test_markdown import assert_inert
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
    assert "cdn" not in page.lower()
    assert 'ws-connect="/ws/dashboard/"' in page


def test_it_needs_a_login(client: Client, db: None) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"
