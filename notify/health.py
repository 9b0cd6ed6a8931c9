"""Whether each channel gets through: the dashboard says "Slack delivery failing: <reason>" while it does not."""

from __future__ import annotations

from datetime import timedelta

from django.template.loader import render_to_string
from django.utils import timezone

from core import broadcast
from notify import policy
from notify.models import DeliveryAttempt

RECENT = timedelta(hours=1)


def failing() -> list[tuple[str, str]]:
    """(channel's name, the reason) for each channel whose last attempt this past hour failed."""
    latest: dict[str, DeliveryAttempt] = {}
    recent = DeliveryAttempt.objects.filter(at__gte=timezone.now() - RECENT).select_related("delivery")
    for attempt in recent.order_by("at", "id"):
        latest[attempt.delivery.channel] = attempt
    return [
        (policy.NAMES.get(channel, channel), attempt.error)
        for channel, attempt in sorted(latest.items())
        if not attempt.ok
    ]


def banner() -> str:
    return render_to_string("notify/health.html", {"failing": failing(), "oob": True})


def changed() -> None:
    """After an attempt: every dashboard shows the channels' state as it now is."""
    broadcast.to_dashboards(banner())
