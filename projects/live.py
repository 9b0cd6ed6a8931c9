"""Open pages hear that who sees what changed: each connects again and is shown what its person may now see."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from core import broadcast
from projects.signals import access_changed


@receiver(access_changed)
def tell_open_pages(sender: Any, **kwargs: Any) -> None:
    broadcast.send(broadcast.ACCESS_GROUP, {"type": "access.changed"})
