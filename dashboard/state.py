"""What a dashboard shows: one builder for the page, a reconnecting page, and the watcher's resend."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from hookbridge_site import runtime
from hooks.models import HookRun
from lifecycle.models import AgentSession, LifecycleEvent
from questions import kinds
from questions.models import Question
from tokens.models import AgentToken


def runs_signature(runs: list[HookRun]) -> tuple[object, ...]:
    """What the dashboard's list of hook runs shows, to tell whether it changed (dashboard.watcher)."""
    return tuple((run.pk, run.status, run.heartbeat_at) for run in runs)


def context() -> dict[str, Any]:
    """Everything the dashboard renders, read now; what it read is noted as seen by this process's dashboards."""
    pending = list(Question.objects.pending().select_related("session"))
    hook_runs = HookRun.recent()
    runtime.dashboard_pending_seen = {str(question.pk) for question in pending}
    runtime.dashboard_runs_seen = runs_signature(hook_runs)
    return {
        "pending": pending,
        "pending_count": len(pending),
        "agents_now": LifecycleEvent.latest_per_agent(),
        "hosts_now": AgentSession.hosts_at_work(),
        "hook_runs": hook_runs,
    }


def filter_choices(pending: list[Question]) -> dict[str, Any]:
    """What the queue can be filtered by: the projects and agents that ask now or asked lately.

    The filter form is outside the live parts, so only the page needs it, not every push or reconnect.
    """
    return {
        "projects": sorted(
            {q.session.project for q in pending if q.session and q.session.project}
            | set(AgentSession.objects.exclude(project="").values_list("project", flat=True)[:50])
        ),
        "agents": sorted(
            {q.asker_name for q in pending} | set(AgentToken.objects.active().values_list("name", flat=True)[:50])
        ),
        "kinds": kinds.choices(),
    }


def live_state() -> list[str]:
    """The whole state as out-of-band swaps, for a page that (re)connects or must catch up."""
    return [render_to_string("dashboard/dashboard.html#live-state", {**context(), "oob": True})]
