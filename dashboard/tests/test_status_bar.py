"""The status bar: one row per agent at work (its newest event), not the newest event from anyone."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from lifecycle.models import AgentSession, LifecycleEvent
from questions.models import Question
from tokens.models import AgentToken


@pytest.mark.django_db
def test_it_keeps_the_newest_event_of_each_agent() -> None:
    a, _ = AgentToken.issue("agent-a")
    b, _ = AgentToken.issue("agent-b")
    LifecycleEvent.record(asker=a, asker_name="agent-a", event_type="phase-started", phase_name="A1")
    LifecycleEvent.record(asker=b, asker_name="agent-b", event_type="phase-started", phase_name="B1")
    LifecycleEvent.record(asker=a, asker_name="agent-a", event_type="task-started", phase_name="A2")
    rows = LifecycleEvent.latest_per_agent()
    assert [(row.asker_name, row.phase_name) for row in rows] == [("agent-a", "A2"), ("agent-b", "B1")]


@pytest.mark.django_db
def test_finished_sessions_and_silent_agents_drop_out() -> None:
    a, _ = AgentToken.issue("agent-a")
    b, _ = AgentToken.issue("agent-b")
    done = AgentSession.open(token=a, name="Done run")
    LifecycleEvent.record(asker=a, asker_name="agent-a", event_type="phase-started", phase_name="Old run")
    done.record("complete", success=True)
    silent = LifecycleEvent.record(asker=b, asker_name="agent-b", event_type="phase-started", phase_name="Long ago")
    LifecycleEvent.objects.filter(pk=silent.pk).update(created_at=timezone.now() - timedelta(hours=2))
    running = AgentSession.open(token=b, name="New run")
    LifecycleEvent.record(asker=b, asker_name="agent-b", event_type="plan-started", phase_name="Now")
    rows = LifecycleEvent.latest_per_agent()
    assert [(row.session_id, row.phase_name) for row in rows] == [(running.pk, "Now")]


def test_the_dashboard_shows_a_row_per_agent(logged_in: Client) -> None:
    for name in ("agent-a", "agent-b"):
        token, _ = AgentToken.issue(name)
        LifecycleEvent.record(asker=token, asker_name=name, event_type="phase-started", phase_name=f"{name} phase")
    bar = logged_in.get("/").content.decode().split('id="status-bar"', 1)[1].split("</section>", 1)[0]
    assert bar.count("<li>") == 2
    assert "agent-a phase" in bar
    assert "agent-b phase" in bar


def test_an_agent_waiting_on_a_person_says_so_before_what_it_last_reported(logged_in: Client) -> None:
    a, _ = AgentToken.issue("agent-a")
    b, _ = AgentToken.issue("agent-b")
    LifecycleEvent.record(asker=a, asker_name="agent-a", event_type="verification-started", step=3, total_steps=3)
    LifecycleEvent.record(asker=b, asker_name="agent-b", event_type="phase-started", phase_name="Build")
    first = Question.ask(asker=a, asker_name="agent-a", text="Ship it?", options=[])[0]
    Question.ask(asker=a, asker_name="agent-a", text="And the docs?", options=[])
    left = Question.ask(asker=b, asker_name="agent-b", text="Gone?", options=[])[0]
    left.agent_stopped_waiting("the connection to the agent closed")  # nobody waits on it now

    bar = logged_in.get("/").content.decode().split('id="status-bar"', 1)[1].split("</section>", 1)[0]
    # Each count names its noun (issue 55): one agent waits, on two questions.
    waiting = '<span class="waiting-count">1 agent waiting on people, for 2 questions</span>'
    assert f'2 agents<span class="at-work"> at work</span> · {waiting}' in bar
    row_a = bar.split("<li", 3)[1] if "agent-a" in bar.split("<li", 3)[1] else bar.split("<li", 3)[2]
    assert 'class="waits"' in row_a
    assert f'<a class="badge waiting" href="/questions/{first.pk}/">waiting for an answer</a>' in row_a, "its oldest"
    assert row_a.index("waiting for an answer") < row_a.index("Verification started")
    assert bar.count("waiting for an answer</a>") == 1, "agent-b's question has nobody waiting on it"

    first.record_answer("yes", by_token=a)
    Question.objects.filter(text="And the docs?").get().record_answer("later", by_token=a)
    bar = logged_in.get("/").content.decode().split('id="status-bar"', 1)[1].split("</section>", 1)[0]
    assert "waiting for an answer" not in bar


def test_it_counts_agents_not_their_sessions(logged_in: Client) -> None:
    a, _ = AgentToken.issue("agent-a")
    b, _ = AgentToken.issue("agent-b")
    for token, sessions in ((a, 3), (b, 1)):  # Claude Code sessions, reporting through their hooks
        for number in range(sessions):
            AgentSession.open_as(uuid.uuid4(), token=token, name=f"{token.name} session {number}", host="claude-code")
    bar = logged_in.get("/").content.decode().split('id="status-bar"', 1)[1].split("</section>", 1)[0]
    assert bar.count("<li") == 4, "a row per session"
    assert '2 agents<span class="at-work"> at work</span><span class="muted"> in 4 sessions</span>' in bar


def test_an_empty_bar_says_what_will_show_there(logged_in: Client) -> None:
    bar = logged_in.get("/").content.decode().split('id="status-bar"', 1)[1].split("</section>", 1)[0]
    assert "No agent is at work: agents show here as they report what they do." in bar
    assert "lifecycle events" not in bar
