"""Claiming a question: "<name> is answering" on every dashboard, until it lapses; anyone may still answer."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from questions.models import Question


@pytest.fixture
def question(db: None) -> Question:
    return Question.ask(asker=None, asker_name="agent-a", text="Which port?", options=[])[0]


def url(question: Question) -> str:
    return f"/questions/{question.pk}/claim"


def test_it_claims_for_the_person_logged_in(logged_in: Client, question: Question) -> None:
    assert logged_in.post(url(question)).status_code == 204
    question.refresh_from_db()
    assert question.claimed_by == "alice"
    assert question.claimed_now
    assert "alice is answering" in logged_in.get(f"/questions/{question.pk}/").content.decode()


def test_a_claim_lapses_without_activity(logged_in: Client, question: Question, settings: object) -> None:
    logged_in.post(url(question))
    Question.objects.filter(pk=question.pk).update(claimed_at=timezone.now() - timedelta(minutes=10))
    question.refresh_from_db()
    assert not question.claimed_now
    assert "alice is answering" not in logged_in.get(f"/questions/{question.pk}/").content.decode()


def test_anyone_still_answers_a_claimed_question(logged_in: Client, question: Question) -> None:
    question.claim(by="bob")
    assert logged_in.post(f"/questions/{question.pk}/answer", {"answer": "8080"}).status_code == 200
    assert Question.objects.get(pk=question.pk).answer.answered_by == "alice"


def test_it_rejects_a_claim_on_an_answered_question(logged_in: Client, question: Question) -> None:
    question.record_answer("8080", by_name="bob")
    response = logged_in.post(url(question))
    assert response.status_code == 409
    assert "already answered by bob" in response.content.decode()


def test_it_needs_a_login_and_a_post(client: Client, logged_in: Client, question: Question) -> None:
    assert logged_in.get(url(question)).status_code == 405
    assert Client().post(url(question)).status_code == 302
    assert Question.objects.get(pk=question.pk).claimed_by == ""
