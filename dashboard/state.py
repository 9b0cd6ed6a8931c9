"""What a dashboard shows: one builder for the page, a reconnecting page, and the watcher's resend."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.template.loader import render_to_string
from django.utils import timezone

from dashboard import runtime as dashboards
from dashboard import status
from hooks.models import HookRun
from notify import health, steps
from projects import access
from projects.models import Project
from questions import kinds, queue
from questions.models import Question


def runs_signature(runs: list[HookRun]) -> tuple[object, ...]:
    """What the dashboard's list of hook runs shows, to tell whether it changed (dashboard.watcher)."""
    return tuple((run.pk, run.status, run.heartbeat_at) for run in runs)


def context(seen: access.Access = access.EVERYTHING) -> dict[str, Any]:
    """Everything the dashboard renders of the projects `seen`, read now.

    What a whole dashboard read is noted as seen by this process's dashboards (the watcher's baseline).
    """
    # Only the first page of the queue is rendered; the ids of all of it tell the watcher what changed.
    pending_ids = {str(pk) for pk in seen.visible(Question.objects.pending()).values_list("pk", flat=True)}
    hook_runs = HookRun.recent(seen.project_ids)
    if seen.everything:
        dashboards.dashboard_pending_seen = pending_ids
        dashboards.dashboard_runs_seen = runs_signature(hook_runs)
    return {
        "queue": queue.page(seen=seen),
        "pending_count": len(pending_ids),
        **status.context(seen),
        "hook_runs": hook_runs,
    }


def counted_state(seen: access.Access) -> str:
    """What a partial dashboard counts across its projects, rendered for it: the pending count and the status bar."""
    count = seen.visible(Question.objects.pending()).count()
    return render_to_string(
        "dashboard/dashboard.html#counted-state", {"pending_count": count, **status.context(seen), "oob": True}
    )


# The Agent filter lists the names that asked within this long (and any with a question still waiting).
FILTER_AGENTS_SINCE = timedelta(days=7)


def filter_choices(seen: access.Access = access.EVERYTHING) -> dict[str, Any]:
    """What the queue can be filtered by: the projects this person sees, and the agents that asked lately.

    A project is a real one (issue 55: the sessions' own labels, Claude Code's folder names, were offered as
    projects, and filtering by one hid a question of that project whose session was labelled otherwise); an
    agent is a name that asked, not every token (an answer token never asks). The filter form is outside the
    live parts, so only the page needs it, not every push or reconnect.
    """
    lately = timezone.now() - FILTER_AGENTS_SINCE
    asked = seen.visible(Question.objects.filter(models.Q(status="pending") | models.Q(created_at__gte=lately)))
    return {
        "projects": sorted(seen.visible(Project.objects.all(), through="pk").values_list("name", flat=True)[:200]),
        "agents": sorted(set(asked.values_list("asker_name", flat=True).distinct()[:200])),
        "kinds": kinds.choices(),
    }


def live_state(seen: access.Access = access.EVERYTHING) -> list[str]:
    """The whole state as out-of-band swaps, for a page that (re)connects or must catch up.

    Then, once the cards are in, each waiting question's next steps (notify.steps) and whether every
    channel gets through (notify.health).
    """
    state = render_to_string("dashboard/dashboard.html#live-state", {**context(seen), "oob": True})
    # In the same message, after the cards they go into (a first page's worth: the message stays in bounds).
    fragments = steps.pending_fragments(limit=settings.HOOKBRIDGE_QUEUE_PAGE, projects=seen.project_ids)
    return [state + fragments + health.banner()]
