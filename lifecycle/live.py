"""What watchers are told when a lifecycle event, a session event or a session's state changes.

The receivers below are connected to lifecycle.signals in LifecycleConfig.ready().
"""

from __future__ import annotations

import functools
import uuid
from typing import Any

from django.dispatch import receiver
from django.template.loader import render_to_string

from core import broadcast
from lifecycle import signals
from lifecycle.models import AgentSession, LifecycleEvent, SessionEvent

OVERVIEW_GROUP = "sessions"


def page_group(guid: uuid.UUID) -> str:
    return f"session-page.{guid.hex}"


@receiver(signals.event_recorded)
def event_recorded(sender: Any, event: LifecycleEvent, **kwargs: Any) -> None:
    # The bar shows the latest event only: a burst of events is a few pushes, the last one current.
    broadcast.send_latest("status-bar", _status_bar)
    if event.session_id:
        session_changed(event.session_id)


def _status_bar() -> list[broadcast.Push]:
    html = render_to_string(
        "lifecycle/status_bar.html#status-bar",
        {"agents_now": LifecycleEvent.latest_per_agent(), "hosts_now": AgentSession.hosts_at_work(), "oob": True},
    )
    return [(broadcast.DASHBOARD_GROUP, {"type": "dashboard.html", "html": html})]


@receiver(signals.session_event_recorded)
def session_event(sender: Any, event_id: int, **kwargs: Any) -> None:
    event = SessionEvent.objects.select_related("session").get(pk=event_id)
    # Programs first: they get the exact event, in order, as JSON.
    broadcast.send(event.session.group_name, {"type": "session.message", "message": event.message()})
    session_changed(event.session_id)
    if event.session.host:
        # A host's session shows what it is doing now in the status bar.
        broadcast.send_latest("status-bar", _status_bar)


@receiver(signals.session_changed)
def _session_changed(sender: Any, guid: uuid.UUID, **kwargs: Any) -> None:
    session_changed(guid)


def session_changed(guid: uuid.UUID) -> None:
    """Tell what people see of the session, its page and its overview row, that it changed (throttled per key).

    Hints, not HTML: each open page renders itself (SessionPageConsumer). Rendering here cost
    a whole timeline per change, on the thread the agent's own call waits on, page open or not:
    a run with a long history made every lifecycle event of its agent slower.
    """
    broadcast.send_latest(f"session.{guid.hex}", functools.partial(_session_page_hint, guid))
    # Each overview renders its own rows (it may be filtered by project): one hint for all sessions.
    broadcast.send_latest(OVERVIEW_GROUP, _overview_hint)


def _session_page_hint(guid: uuid.UUID) -> list[broadcast.Push]:
    return [(page_group(guid), {"type": "session.changed"})]


def _overview_hint() -> list[broadcast.Push]:
    return [(OVERVIEW_GROUP, {"type": "sessions.changed"})]
