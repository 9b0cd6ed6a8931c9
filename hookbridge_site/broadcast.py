"""Pushing HTML to every open dashboard through the channel layer."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

DASHBOARD_GROUP = "dashboard"


def send(group: str, message: dict[str, Any]) -> None:
    """Send from sync code (on-commit hooks). A push is a hint: failing to send is logged, not raised."""
    try:
        async_to_sync(get_channel_layer().group_send)(group, message)
    except Exception:
        logger.warning("Could not send %s to group %s", message.get("type"), group, exc_info=True)


def to_dashboards(html: str) -> None:
    send(DASHBOARD_GROUP, {"type": "dashboard.html", "html": html})
