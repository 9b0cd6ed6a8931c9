"""Pushing a new lifecycle event to every open dashboard's status bar."""

from __future__ import annotations

from django.template.loader import render_to_string

from hookbridge_site import broadcast
from lifecycle.models import LifecycleEvent


def event_recorded(event_id: int) -> None:
    event = LifecycleEvent.objects.get(pk=event_id)
    html = render_to_string("lifecycle/status_bar.html#status-bar", {"last_event": event, "oob": True})
    broadcast.to_dashboards(html)
