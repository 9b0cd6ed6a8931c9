"""What open dashboards are told when a question changes (waiting calls: questions.wakeups).

The receivers below are connected to questions.signals in QuestionsConfig.ready().
A question's card and the pending count are this app's partials
(templates/questions/card.html); the dashboard page includes them.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.dispatch import receiver
from django.template.loader import render_to_string

from core import broadcast
from core.signals import person_deactivated
from lifecycle import live as lifecycle_live
from projects.models import Membership, Role
from questions import signals
from questions.models import Answer, Question
from questions.queue import card_html


@receiver(signals.question_asked)
def question_asked(sender: Any, question: Question, **kwargs: Any) -> None:
    if not broadcast.dashboards_heard():
        _touch_session(question)
        return
    card = card_html(question, announce=True)
    added = "questions/card.html#question-added"
    html = render_to_string(added, {"card": card, "pending_count": Question.objects.pending().count()})
    # Dashboards that see some projects count for themselves; their viewers get a card without the answer form.
    item = render_to_string(added, {"card": card})
    view = None
    if Membership.objects.filter(project=question.project_id, role=Role.VIEWER).exists():
        view = render_to_string(added, {"card": card_html(question, announce=True, read_only=True)})
    broadcast.to_dashboards(html, project=question.project_id, item=item, view=view, recount=True)
    _touch_session(question)


def _touch_session(question: Question) -> None:
    if question.session_id:
        lifecycle_live.session_changed(question.session_id)


@receiver(signals.agent_presence_changed)
def agent_presence_changed(sender: Any, question_id: uuid.UUID, **kwargs: Any) -> None:
    """The agent stopped waiting on a pending question, or came back: only the card's notice changes.

    The notice is its own element, so a person typing into the card keeps what they typed.
    """
    question = Question.objects.get(pk=question_id)
    if broadcast.dashboards_heard():
        html = render_to_string("questions/card.html#agent-state", {"question": question, "oob": True})
        broadcast.to_dashboards(html, project=question.project_id)
    _touch_session(question)


@receiver(signals.question_claimed)
@broadcast.when_heard(broadcast.DASHBOARD_GROUP, broadcast.PARTIAL_GROUP)
def question_claimed(sender: Any, question_id: uuid.UUID, **kwargs: Any) -> None:
    """Only the card's claim line changes: a person typing into the card elsewhere keeps what they typed."""
    question = Question.objects.get(pk=question_id)
    html = render_to_string("questions/card.html#claim", {"question": question, "oob": True})
    broadcast.to_dashboards(html, project=question.project_id)


@receiver(signals.vote_counted)
@broadcast.when_heard(broadcast.DASHBOARD_GROUP, broadcast.PARTIAL_GROUP)
def vote_counted(sender: Any, question_id: uuid.UUID, **kwargs: Any) -> None:
    """An allow counted toward an approval's quorum: only the card's votes change (typing elsewhere is kept)."""
    question = Question.objects.get(pk=question_id)
    html = render_to_string("questions/kinds/approval.html#votes", {"question": question, "oob": True})
    broadcast.to_dashboards(html, project=question.project_id)


@receiver(signals.questions_changed)
def dashboards_resync(sender: Any, **kwargs: Any) -> None:
    """Every open dashboard fetches its whole current state (after a change to many questions at once)."""
    broadcast.send(broadcast.DASHBOARD_GROUP, {"type": "state.resync"})
    broadcast.send(broadcast.PARTIAL_GROUP, {"type": "state.resync"})


@receiver(signals.question_resolved)
def question_resolved(sender: Any, question_id: uuid.UUID, answer: Answer | None = None, **kwargs: Any) -> None:
    # The waiting call was woken first (questions.wakeups.wake_the_waiting_calls).
    question = Question.as_resolved(question_id, answer)
    if broadcast.dashboards_heard():
        removed = "questions/card.html#question-removed"
        html = render_to_string(removed, {"question": question, "pending_count": Question.objects.pending().count()})
        item = render_to_string(removed, {"question": question})
        broadcast.to_dashboards(html, project=question.project_id, item=item, recount=True)
    _touch_session(question)


@receiver(person_deactivated, dispatch_uid="questions-release-claims")
def person_left(sender: Any, user_id: int, username: str, **kwargs: Any) -> None:
    """A deactivated person's claims end now, not when HOOKBRIDGE_CLAIM_SECONDS runs out."""
    Question.release_claims_of(username)
