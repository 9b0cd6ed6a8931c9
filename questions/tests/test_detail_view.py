"""One question's page: answerable while pending (with the agent's state), otherwise why it ended."""

from __future__ import annotations

from datetime import timedelta

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from questions.models import Question
from tokens.models import AgentToken


def ask(agent: tuple[AgentToken, str], text: str) -> Question:
    return Question.ask(asker=agent[0], asker_name="agent-a", text=text, options=[])[0]


def page(client: Client, question: Question) -> str:
    response = client.get(reverse("questions:detail", args=[question.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_it_marks_a_pending_question_whose_agent_stopped_waiting(
    logged_in: Client, agent: tuple[AgentToken, str]
) -> None:
    question = ask(agent, "Still answerable?")
    assert "The agent stopped waiting" not in page(logged_in, question)
    question.agent_stopped_waiting("the client gave up waiting: Request timed out")
    html = page(logged_in, question)
    assert "The agent stopped waiting; it usually asks again" in html
    assert 'title="the client gave up waiting: Request timed out"' in html
    assert "Send answer" in html


def test_it_says_an_aborted_question_comes_back_if_asked_again(
    logged_in: Client, agent: tuple[AgentToken, str]
) -> None:
    question = ask(agent, "Aborted?")
    question.abort("aborted at the agent: AbortError: This operation was aborted")
    html = page(logged_in, question)
    assert "aborted at the agent" in html
    assert "within 30 minutes, it comes back here" in html
    assert "Send answer" not in html


def test_it_says_a_withdrawn_question_was_not_asked_again(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    question = ask(agent, "Withdrawn?")
    question.agent_stopped_waiting("the connection to the agent closed")
    Question.objects.filter(pk=question.pk).update(agent_left_at=timezone.now() - timedelta(hours=1))
    assert Question.expire_abandoned() == 1
    html = page(logged_in, question)
    assert "(the connection to the agent closed) and did not ask again" in html
    assert "Send answer" not in html
