"""A task's time to live (mcpapi.tasks.readable): its handle's ttlMs is kept, and a read after it is refused
in words that say so, to its owner alone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from mcp.shared.exceptions import MCPError

from mcpapi import tasks
from mcpapi.models import AskTask
from questions.models import Question
from tokens.models import AgentToken

pytestmark = [pytest.mark.django_db]


def asked(timeout_seconds: float | None) -> tuple[AskTask, AgentToken]:
    agent, _ = AgentToken.issue("agent-a")
    question, _ = Question.ask(
        asker=agent, asker_name="agent-a", text="Which region?", options=[], timeout_seconds=timeout_seconds
    )
    return AskTask.open(question, agent.pk, "ask-one-question"), agent


def test_a_task_read_within_its_ttl_says_how_it_stands() -> None:
    task, agent = asked(timeout_seconds=300)
    state, _ = tasks.readable(task.pk, agent.pk)
    assert state["status"] == "working"
    assert state["ttlMs"] == task.ttl_ms()


def test_it_refuses_a_read_past_the_ttl_saying_until_when_it_was_kept() -> None:
    task, agent = asked(timeout_seconds=300)
    kept_until = task.kept_until()
    assert kept_until is not None
    # Asked a day ago, with a 300 s deadline and the re-attach window long past.
    AskTask.objects.filter(pk=task.pk).update(created_at=task.created_at - timedelta(days=1))
    Question.objects.filter(pk=task.question_id).update(created_at=timezone.now() - timedelta(days=1))
    with pytest.raises(MCPError) as refused:
        tasks.readable(task.pk, agent.pk)
    assert refused.value.error.code == -32602
    assert refused.value.error.message.startswith(f"taskId: task {task.pk!r} has expired: it was kept until ")


def test_another_token_is_told_only_that_it_has_no_such_task_expired_or_not() -> None:
    task, _ = asked(timeout_seconds=300)
    other, _ = AgentToken.issue("agent-b")
    AskTask.objects.filter(pk=task.pk).update(created_at=task.created_at - timedelta(days=1))
    Question.objects.filter(pk=task.question_id).update(created_at=timezone.now() - timedelta(days=1))
    with pytest.raises(MCPError) as refused:
        tasks.readable(task.pk, other.pk)
    assert refused.value.error.message == f"taskId: no task {task.pk!r} of yours here"


def background(task: AskTask) -> None:
    Question.objects.filter(pk=task.question_id).update(asked_in_background=True)


def test_a_question_without_a_deadline_has_a_numeric_ttl_that_a_poll_carries_on() -> None:
    """Issue 55, point 11: a null ttlMs kept a task (and its card) alive after its client was gone."""
    task, agent = asked(timeout_seconds=None)
    background(task)
    first = task.ttl_ms()
    assert isinstance(first, int)
    assert first == (60 + 1800) * 1000  # STOPPED_ASKING_AFTER and the re-attach window, from its creation
    # A day on, the agent still polls: its task lives on, and says for how long.
    a_day_ago = timezone.now() - timedelta(days=1)
    AskTask.objects.filter(pk=task.pk).update(created_at=a_day_ago)
    Question.objects.filter(pk=task.question_id).update(created_at=a_day_ago, agent_polled_at=timezone.now())
    state, _ = tasks.readable(task.pk, agent.pk)
    assert state["status"] == "working"
    assert state["ttlMs"] > 24 * 3600 * 1000


def test_a_background_question_whose_agent_stopped_polling_is_marked_and_then_leaves_the_queue() -> None:
    task, agent = asked(timeout_seconds=None)
    background(task)
    question = Question.objects.get(pk=task.question_id)
    question.agent_polled()
    assert Question.stopped_asking() == 0, "polled a moment ago"
    two_minutes_ago = timezone.now() - timedelta(minutes=2)
    Question.objects.filter(pk=question.pk).update(agent_polled_at=two_minutes_ago)
    assert Question.stopped_asking() == 1
    left = Question.objects.get(pk=question.pk)
    assert left.agent_left
    at = timezone.localtime(two_minutes_ago).strftime("%H:%M:%S")
    assert left.agent_left_reason == f"the agent stopped asking: its task was last polled at {at}"

    # A poll brings it back; silence again, past the re-attach window, withdraws it as any abandoned question.
    tasks.readable(task.pk, agent.pk)
    assert not Question.objects.get(pk=question.pk).agent_left
    Question.objects.filter(pk=question.pk).update(agent_polled_at=two_minutes_ago)
    assert Question.expire_abandoned() == 0, "marked now; withdrawn only after the window"
    Question.objects.filter(pk=question.pk).update(agent_left_at=timezone.now() - timedelta(hours=1))
    assert Question.expire_abandoned() == 1
    ended = Question.objects.get(pk=question.pk)
    assert (ended.status, ended.cancel_reason) == ("cancelled", "agent_gone")


def test_a_held_question_is_never_marked_as_stopped_asking() -> None:
    task, _ = asked(timeout_seconds=None)  # not in the background: a held call says when it ends
    Question.objects.filter(pk=task.question_id).update(created_at=timezone.now() - timedelta(hours=1))
    assert Question.stopped_asking() == 0


def test_an_ended_questions_task_is_kept_the_re_attach_window_after_its_end() -> None:
    task, _ = asked(timeout_seconds=None)
    question = Question.objects.get(pk=task.question_id)
    question.record_answer(text="eu-west", by_name="bob")
    task.refresh_from_db()
    ends = Question.objects.get(pk=question.pk).resolved_at
    assert ends is not None
    assert abs(task.kept_until() - (ends + timedelta(seconds=1800))) < timedelta(milliseconds=1)  # ttlMs: whole ms
