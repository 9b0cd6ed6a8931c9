"""What open dashboards and waiting calls are told when a question changes."""

from __future__ import annotations

import uuid

from django.template.loader import render_to_string

from hookbridge_site import broadcast
from questions import watcher
from questions.models import Question, question_group


def question_asked(question_id: uuid.UUID, *, new: bool = True) -> None:
    question = Question.objects.get(pk=question_id)
    watcher.note_pushed(question.pk, pending=True)
    if new:
        from questions import webhook

        webhook.notify_new_question(question)
    html = render_to_string(
        "questions/dashboard.html#question-added",
        {"question": question, "pending_count": Question.objects.pending().count()},
    )
    broadcast.to_dashboards(html)
    _touch_session(question)


def _touch_session(question: Question) -> None:
    if question.session_id:
        from lifecycle import live as lifecycle_live

        lifecycle_live.session_changed(question.session_id)


def agent_presence_changed(question_id: uuid.UUID) -> None:
    """The agent stopped waiting on a pending question, or came back: only the card's notice changes.

    The notice is its own element, so a person typing into the card keeps what they typed.
    """
    question = Question.objects.get(pk=question_id)
    html = render_to_string("questions/dashboard.html#agent-state", {"question": question, "oob": True})
    broadcast.to_dashboards(html)
    _touch_session(question)


def dashboards_resync() -> None:
    """Every open dashboard fetches its whole current state (after a change to many questions at once)."""
    broadcast.send(broadcast.DASHBOARD_GROUP, {"type": "state.resync"})


def question_resolved(question_id: uuid.UUID) -> None:
    # Wake the waiting call first: it is what an agent is blocked on.
    broadcast.send(question_group(question_id), {"type": "question.resolved"})
    question = Question.objects.select_related("answer").get(pk=question_id)
    watcher.note_pushed(question.pk, pending=False)
    html = render_to_string(
        "questions/dashboard.html#question-removed",
        {"question": question, "pending_count": Question.objects.pending().count()},
    )
    broadcast.to_dashboards(html)
    _touch_session(question)
