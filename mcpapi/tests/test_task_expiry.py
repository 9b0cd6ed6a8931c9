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


def test_a_question_without_a_deadline_keeps_its_task_until_answered() -> None:
    task, agent = asked(timeout_seconds=None)
    AskTask.objects.filter(pk=task.pk).update(created_at=task.created_at - timedelta(days=30))
    assert task.kept_until() is None
    state, _ = tasks.readable(task.pk, agent.pk)
    assert state["status"] == "working"
