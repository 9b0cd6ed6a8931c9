"""What watchers are told when a lifecycle event, a session event or a session's state changes.

The receivers below are connected to lifecycle.signals in LifecycleConfig.ready().
"""

from __future__ import annotations

import functools
import uuid
from typing import Any

from django.dispatch import receiver

from core import broadcast
from lifecycle import signals
from lifecycle.models import LifecycleEvent, SessionEvent

OVERVIEW_GROUP = "sessions"


def page_group(guid: uuid.UUID) -> str:
    return f"session-page.{guid.hex}"


@receiver(signals.event_recorded)
def event_recorded(sender: Any, event: LifecycleEvent, **kwargs: Any) -> None:
    # The dashboard's status bar follows the same signal (dashboard.status): it also shows who waits on a person.
    if event.session_id:
        session_changed(event.session_id)


@receiver(signals.session_event_recorded)
def session_event(sender: Any, event_id: int, **kwargs: Any) -> None:
    event = SessionEvent.objects.select_related("session").get(pk=event_id)
    # Programs first: they get the exact event, in order, as JSON.
    broadcast.send(event.session.group_name, {"type": "session.message", "message": event.message()})
    session_changed(event.session_id)


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
