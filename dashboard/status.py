"""The dashboard's status bar: each agent at work, and which of them wait on a person now (issue 29).

The bar is the dashboard's own composition of two apps below it: what the agents report (lifecycle) and
the questions they wait on (questions). So it is rendered here, and pushed (throttled, the last render
current) whenever either changes: an agent's event, a question asked, answered, ended, or left.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import models
from django.dispatch import receiver
from django.template.loader import render_to_string

from core import broadcast
from lifecycle import signals as lifecycle_signals
from lifecycle.models import AgentSession, LifecycleEvent
from projects import access
from questions import signals as question_signals
from questions.models import Question


def context(seen: access.Access = access.EVERYTHING) -> dict[str, Any]:
    """The bar's rows as (row, id of the question it waits on a person for, or None), of `seen`'s projects."""
    events = LifecycleEvent.latest_per_agent(projects=seen.project_ids)
    hosts = AgentSession.hosts_at_work(projects=seen.project_ids)
    by_session: dict[uuid.UUID, str] = {}
    by_agent: dict[tuple[int | None, str], str] = {}
    # Only the questions of the agents on the bar (it is drawn up to 4 times a second while agents report,
    # with thousands of calls waiting on a busy server); oldest first, so each mark points at the longest wait.
    sessions = [event.session_id for event in events if event.session_id] + [session.pk for session in hosts]
    askers = [event.asker_id for event in events if not event.session_id]
    mine = models.Q(session_id__in=sessions) | models.Q(asker_id__in=askers)
    waiting = Question.objects.pending().filter(mine, agent_left_at__isnull=True).order_by("created_at")
    if not events and not hosts:
        waiting = waiting.none()
    waiting_questions = 0
    for pk, session_id, asker_id, asker_name in waiting.values_list("pk", "session_id", "asker_id", "asker_name"):
        waiting_questions += 1
        if session_id is not None:
            by_session.setdefault(session_id, str(pk))
        by_agent.setdefault((asker_id, asker_name), str(pk))
    agents_now = [
        (
            event,
            by_session.get(event.session_id) if event.session_id else by_agent.get((event.asker_id, event.asker_name)),
        )
        for event in events
    ]
    hosts_now = [(session, by_session.get(session.pk)) for session in hosts]
    waiting_rows = sum(1 for _, waits_on in [*agents_now, *hosts_now] if waits_on)
    waiting_agents = len(
        {event.asker_name for event, waits_on in agents_now if waits_on}
        | {session.owner_name for session, waits_on in hosts_now if waits_on}
    )
    # An agent is its token: one agent with three open sessions is one agent (issue 39: "7 agents at work"
    # were four agents' seven sessions). The rows stay one per session.
    agents = {event.asker_name for event, _ in agents_now} | {session.owner_name for session, _ in hosts_now}
    return {
        "agents_now": agents_now,
        "hosts_now": hosts_now,
        # What waits, each count naming its noun (issue 55: "7 waiting for an answer" counted sessions beside
        # "Waiting for an answer 18", which counts questions).
        "waiting_agents": waiting_agents,
        "waiting_rows": waiting_rows,
        "waiting_questions": waiting_questions,
        "agent_count": len(agents),
        "row_count": len(agents_now) + len(hosts_now),
    }


def push(*, only_with_rows: bool = False) -> list[broadcast.Push]:
    """The bar as it now is; `only_with_rows`: nothing when no agent is on it (a question's change marks none)."""
    if not broadcast.dashboards_heard():
        return []
    bar = context()
    if only_with_rows and not bar["agents_now"] and not bar["hosts_now"]:
        return []
    html = render_to_string("dashboard/status_bar.html#status-bar", {**bar, "oob": True})
    # Dashboards that see some projects render their own bar (dashboard.consumers).
    stale = (broadcast.PARTIAL_GROUP, {"type": "aggregates.stale"})
    return [(broadcast.DASHBOARD_GROUP, {"type": "dashboard.html", "html": html}), stale]


def push_marks() -> list[broadcast.Push]:
    return push(only_with_rows=True)


def changed() -> None:
    # A burst of changes is a few pushes, the last one rendered after the last change.
    broadcast.send_latest("status-bar", push)


@receiver(lifecycle_signals.event_recorded)
def _event_recorded(sender: Any, **kwargs: Any) -> None:
    changed()


@receiver(lifecycle_signals.session_event_recorded)
def _session_event(sender: Any, **kwargs: Any) -> None:
    # A host's session shows what it is doing now in the bar (cheap to decide there: one row's worth).
    changed()


@receiver(question_signals.question_asked)
@receiver(question_signals.question_resolved)
@receiver(question_signals.agent_presence_changed)
@receiver(question_signals.questions_changed)
def _waiting_changed(sender: Any, **kwargs: Any) -> None:
    # Never in the request that asked or answered (its on-commit hooks run in it): the render is only news,
    # so it comes later, on the database thread, once the wake-up and the cards are out. A key of its own:
    # a change of the bar's rows (the lifecycle's) is never skipped for want of rows to mark.
    broadcast.send_latest("status-bar-marks", push_marks, defer=True)
