"""What comes next for a question, in words: "Slack: sent · e-mail at 14:52 (in 9 min)".

On its card (pushed to every dashboard as the steps go) and on its link's page: a person sees who else
will be asked, and when, if nobody answers first.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from datetime import datetime

from django.template.loader import render_to_string
from django.utils import timezone

from core import broadcast
from notify import policy
from notify.models import Delivery, Purpose, Status
from questions.models import Question


def line(question_id: uuid.UUID) -> str:
    now = timezone.now()
    said: list[str] = []
    # A push step is one row per browser: they read as one step, "push: sent (3 browsers)".
    grouped: dict[str, list[Delivery]] = {}
    for step in Delivery.objects.filter(question_id=question_id, purpose=Purpose.NOTIFY).order_by("due_at", "id"):
        grouped.setdefault(step.channel, []).append(step)
    for channel, rows in grouped.items():
        name = policy.NAMES.get(channel, channel)
        name = name[0].upper() + name[1:] if not said else name
        phrases = list(dict.fromkeys(_phrase(name, step, now) for step in rows))
        phrases = [phrase for phrase in phrases if phrase]
        if len(rows) > 1 and len(phrases) == 1:
            phrases = [f"{phrases[0]} ({len(rows)} browsers)"]
        said.extend(phrases)
    return " · ".join(said)


def _phrase(name: str, step: Delivery, now: datetime) -> str:
    if step.status == Status.SENT:
        return f"{name}: sent"
    if step.status == Status.FAILED:
        return f"{name}: failed ({step.last_error})"
    if step.status in (Status.DUE, Status.SENDING):
        left = (step.due_at - now).total_seconds()
        when = timezone.localtime(step.due_at).strftime("%H:%M")
        return f"{name} now" if left < 1 else f"{name} at {when} (in {max(1, round(left / 60))} min)"
    return ""


def fragment(question_id: uuid.UUID) -> str:
    return render_to_string("notify/next_steps.html", {"question_id": question_id, "line": line(question_id)})


def changed(question_id: uuid.UUID) -> None:
    """Every dashboard's card of the question shows its steps as they now stand."""
    project = Question.objects.filter(pk=question_id).values_list("project_id", flat=True).first()
    if project is not None:
        broadcast.to_dashboards(fragment(question_id), project=project)


def pending_fragments(limit: int = 200, projects: Collection[int] | None = None) -> str:
    """The steps of the waiting questions that have any, for a dashboard that (re)connects, in one message.

    `projects`: of their questions only (None: every project's).
    """
    mine = Delivery.objects.all() if projects is None else Delivery.objects.filter(question__project__in=list(projects))
    waiting = (
        mine.filter(question__status="pending", purpose=Purpose.NOTIFY)
        .values_list("question_id", flat=True)
        .distinct()[:limit]
    )
    return "".join(fragment(question_id) for question_id in waiting)
