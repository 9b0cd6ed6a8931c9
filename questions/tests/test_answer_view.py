from __future__ import annotations

import pytest
from django.test import Client

from questions.models import Question, Status
from tokens.models import AgentToken


@pytest.fixture
def question(agent: tuple[AgentToken, str]) -> Question:
    token = agent[0]
    options = [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]
    return Question.ask(asker=token, asker_name=token.name, text="Deploy?", options=options)[0]


def url(question: Question) -> str:
    return f"/questions/{question.pk}/answer"


def test_it_records_an_option_and_says_where_it_went(logged_in: Client, question: Question) -> None:
    response = logged_in.post(url(question), {"option": "yes"}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert 'hx-swap-oob="beforeend"' in response.text
    assert "Answer sent to agent-a: “Deploy?”" in response.text
    question.refresh_from_db()
    assert (question.status, question.answer.text, question.answer.answered_by) == (
        "answered",
        "yes",
        "alice",
    )


def test_it_records_free_text(logged_in: Client, question: Question) -> None:
    assert logged_in.post(url(question), {"answer": "Only on Fridays"}).status_code == 200
    assert Question.objects.get(pk=question.pk).answer.text == "Only on Fridays"


def test_it_rejects_a_second_answer(logged_in: Client, question: Question) -> None:
    logged_in.post(url(question), {"option": "yes"})
    response = logged_in.post(url(question), {"option": "no"})
    assert response.status_code == 409
    assert "already answered by alice" in response.text
    assert Question.objects.get(pk=question.pk).answer.text == "yes"


def test_it_rejects_an_empty_answer_and_keeps_the_card(logged_in: Client, question: Question) -> None:
    response = logged_in.post(url(question), {"answer": ""})
    assert response.status_code == 422
    assert f'id="question-{question.pk}"' in response.text
    assert "Choose one of the options, or write your own answer." in response.text
    assert Question.objects.get(pk=question.pk).status == Status.PENDING


def test_it_needs_a_login(client: Client, question: Question) -> None:
    response = client.post(url(question), {"option": "yes"})
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]
    assert Question.objects.get(pk=question.pk).status == Status.PENDING


def test_it_needs_csrf(user: object, question: Question) -> None:
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)  # type: ignore[arg-type]
    assert strict.post(url(question), {"option": "yes"}).status_code == 403
    assert Question.objects.get(pk=question.pk).status == Status.PENDING


def test_it_only_takes_post(logged_in: Client, question: Question) -> None:
    assert logged_in.get(url(question)).status_code == 405


def test_it_404s_for_an_unknown_question(logged_in: Client, db: None) -> None:
    assert logged_in.post("/questions/5f0c1c5e-4a7e-4c43-9d4c-000000000000/answer", {"answer": "x"}).status_code == 404
