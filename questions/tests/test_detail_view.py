"""One question's page: answerable while pending (with the agent's state), otherwise why it ended."""

from __future__ import annotations

from datetime import timedelta

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from questions import wording
from questions.asking import SERVER_RESTARTED
from questions.kinds import Kind
from questions.models import CancelReason, Question
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


def approval(agent: tuple[AgentToken, str]) -> Question:
    payload = {"tool_name": "Bash", "tool_input": {"command": "make deploy"}}
    return Question.ask(
        asker=agent[0], asker_name="agent-a", text="make deploy", options=[], kind=Kind.APPROVAL, payload=payload
    )[0]


def test_an_expired_approval_says_its_host_asked_at_its_terminal(
    logged_in: Client, agent: tuple[AgentToken, str]
) -> None:
    expired = approval(agent)
    expired.time_out()
    shown = page(logged_in, expired)
    assert 'its host was told "no decision", and asked at its own terminal instead' in shown
    assert "proceed on its own" not in shown


def test_an_approval_whose_host_stopped_waiting_says_only_what_the_server_saw(
    logged_in: Client, agent: tuple[AgentToken, str]
) -> None:
    decided = approval(agent)
    decided.host_stopped_waiting("the tool ran: decided at the host's own prompt")
    shown = page(logged_in, decided)
    assert "Its host stopped waiting at" in shown
    assert "(the tool ran: decided at the host&#x27;s own prompt)" in shown
    assert "comes back here" not in shown
    assert wording.outcome_badge(decided) == ("host_decided", "Host stopped waiting")


def test_an_approval_cut_by_a_server_restart_is_recorded_as_decided_by_nobody(
    logged_in: Client, agent: tuple[AgentToken, str]
) -> None:
    """Issue 55, point 5: it was recorded "Decided at the terminal"; nobody decided it."""
    cut = approval(agent)
    assert cut.host_stopped_waiting(SERVER_RESTARTED, server_restarted=True)
    cut.refresh_from_db()
    assert cut.cancel_reason == CancelReason.SERVER_RESTARTED
    shown = page(logged_in, cut)
    assert "Nobody decided it: the server restarted at" in shown
    assert "decided at the terminal" not in shown.lower()
    assert wording.outcome_badge(cut) == ("host_decided", "Server restarted")
    assert wording.outcome_words(cut).startswith("was decided by nobody: the server restarted")


def test_an_answer_reads_as_markdown(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    question = ask(agent, "Which store?")
    question.record_answer("Use **Redis**", by_token=agent[0])
    assert "Use <strong>Redis</strong>" in page(logged_in, question)
