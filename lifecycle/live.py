"""What watchers are told when a lifecycle event, a session event or a session's state changes."""

from __future__ import annotations

import functools
import uuid

from django.template.loader import render_to_string

from hookbridge_site import broadcast
from lifecycle.models import AgentSession, HookRun, LifecycleEvent, SessionEvent

OVERVIEW_GROUP = "sessions"


def run_group(run_id: uuid.UUID) -> str:
    return f"hook-run.{run_id.hex}"


def page_group(guid: uuid.UUID) -> str:
    return f"session-page.{guid.hex}"


def event_recorded(event: LifecycleEvent) -> None:
    # The bar shows the latest event only: a burst of events is a few pushes, the last one current.
    broadcast.send_latest("status-bar", _status_bar)
    if event.session_id:
        session_changed(event.session_id)


def _status_bar() -> list[broadcast.Push]:
    html = render_to_string(
        "lifecycle/status_bar.html#status-bar", {"last_event": LifecycleEvent.latest(), "oob": True}
    )
    return [(broadcast.DASHBOARD_GROUP, {"type": "dashboard.html", "html": html})]


def session_event(event_id: int) -> None:
    event = SessionEvent.objects.select_related("session").get(pk=event_id)
    # Programs first: they get the exact event, in order, as JSON.
    broadcast.send(event.session.group_name, {"type": "session.message", "message": event.message()})
    session_changed(event.session_id)


def session_changed(guid: uuid.UUID) -> None:
    """Re-render what people see of the session: its page and its overview row (each the latest state only)."""
    broadcast.send_latest(f"session.{guid.hex}", functools.partial(_session_page, guid))
    # Each overview renders its own rows (it may be filtered by project): one hint for all sessions.
    broadcast.send_latest(OVERVIEW_GROUP, _overview_hint)


def _session_page(guid: uuid.UUID) -> list[broadcast.Push]:
    session = AgentSession.objects.get(pk=guid)
    page = render_to_string("lifecycle/session.html#live-parts", {"session": session, "oob": True})
    return [(page_group(guid), {"type": "dashboard.html", "html": page})]


def _overview_hint() -> list[broadcast.Push]:
    return [(OVERVIEW_GROUP, {"type": "sessions.changed"})]


def hook_run_started(run_id: uuid.UUID) -> None:
    run = HookRun.objects.prefetch_related("directories").get(pk=run_id)
    broadcast.to_dashboards(render_to_string("lifecycle/hook_runs.html#hook-run-added", {"run": run}))


def hook_run_changed(run_id: uuid.UUID) -> None:
    run = HookRun.objects.prefetch_related("directories").get(pk=run_id)
    broadcast.to_dashboards(render_to_string("lifecycle/hook_runs.html#hook-run", {"run": run, "oob": True}))
    page = render_to_string("lifecycle/hook_run.html#run-live", {"run": run, "oob": True})
    broadcast.send(run_group(run_id), {"type": "dashboard.html", "html": page})
