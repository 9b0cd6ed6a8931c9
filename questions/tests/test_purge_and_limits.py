from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone

from hooks.models import HookRun, HookRunDirectory, RunStatus
from lifecycle.models import AgentSession, LifecycleEvent
from questions.models import Answer, Question, RateLimited, Status
from tokens.models import AgentToken


def ask(token: AgentToken, text: str) -> Question:
    return Question.ask(asker=token, asker_name=token.name, text=text, options=[])[0]


@pytest.fixture
def token(db: None) -> AgentToken:
    return AgentToken.issue("agent-a")[0]


def test_purge_removes_old_history_and_keeps_what_is_recent_or_pending(token: AgentToken) -> None:
    long_ago = timezone.now() - timedelta(days=120)
    old = ask(token, "Old and answered?")
    old.record_answer("yes", by_token=token)
    old_pending = ask(token, "Old but still pending?")
    recent = ask(token, "Recent?")
    recent.record_answer("yes", by_token=token)
    Question.objects.filter(pk__in=[old.pk, old_pending.pk]).update(created_at=long_ago)
    LifecycleEvent.objects.create(event_type="plan-started", asker_name="a", created_at=long_ago)
    LifecycleEvent.objects.create(event_type="plan-started", asker_name="a")
    finished = AgentSession.open(token=token)
    finished.close()
    AgentSession.objects.filter(pk=finished.pk).update(last_activity_at=long_ago)
    still_open = AgentSession.open(token=token)
    AgentSession.objects.filter(pk=still_open.pk).update(last_activity_at=long_ago)

    out = StringIO()
    call_command("purge", "--older-than", "90d", "--dry-run", stdout=out)
    assert "Would remove 1 questions" in out.getvalue()
    assert "Would remove 1 sessions" in out.getvalue()
    assert Question.objects.count() == 3

    out = StringIO()
    call_command("purge", "--older-than", "90d", stdout=out)
    assert "Removed 1 questions (with their answers)" in out.getvalue()
    assert "Removed 1 lifecycle events" in out.getvalue()
    assert set(Question.objects.values_list("pk", flat=True)) == {old_pending.pk, recent.pk}
    assert Answer.objects.count() == 1
    assert LifecycleEvent.objects.count() == 1
    assert list(AgentSession.objects.values_list("pk", flat=True)) == [still_open.pk]
    assert Question.objects.get(pk=old_pending.pk).status == Status.PENDING


def test_purge_removes_old_finished_hook_runs_with_their_output(token: AgentToken) -> None:
    long_ago = timezone.now() - timedelta(days=120)
    fields: dict[str, Any] = {
        "plugin": "p", "hook": "h", "title": "H P", "command": "true", "max_concurrent": 1, "timeout_seconds": 600,
        "caller": token, "caller_name": "agent-a", "fail_fast": True, "verbose": False,
    }  # fmt: skip
    old = HookRun.start(tool="p_h", target="old", **fields)
    old.plan(["old"])
    old.finish(RunStatus.PASSED)
    HookRun.objects.filter(pk=old.pk).update(started_at=long_ago, finished_at=long_ago)
    old_but_running = HookRun.start(tool="p_h", target="running", **fields)
    HookRun.objects.filter(pk=old_but_running.pk).update(started_at=long_ago)
    recent = HookRun.start(tool="p_h", target="recent", **fields)
    recent.finish(RunStatus.FAILED)

    out = StringIO()
    call_command("purge", "--older-than", "90d", stdout=out)
    assert "Removed 1 hook runs (with their output)" in out.getvalue()
    assert set(HookRun.objects.values_list("pk", flat=True)) == {old_but_running.pk, recent.pk}
    assert HookRunDirectory.objects.count() == 0


@pytest.mark.parametrize("age", ["90", "0d", "ninety days", "-5d"])
def test_purge_refuses_a_bad_age(db: None, age: str) -> None:
    with pytest.raises(CommandError, match="--older-than takes a positive age"):
        call_command("purge", f"--older-than={age}", stdout=StringIO())


@override_settings(HOOKBRIDGE_QUESTIONS_PER_MINUTE=3)
def test_a_token_may_ask_only_so_many_new_questions_a_minute(token: AgentToken) -> None:
    for n in range(3):
        ask(token, f"Question {n}?")
    with pytest.raises(RateLimited, match="at most 3 new questions a minute"):
        ask(token, "One too many?")
    assert ask(token, "Question 0?").text == "Question 0?"  # re-attaching is not a new question
    other, _ = AgentToken.issue("agent-b")
    assert ask(other, "Another token?").asker_name == "agent-b"
    assert Question.objects.count() == 4
