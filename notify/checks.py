"""HOOKBRIDGE_NOTIFY is read at start-up: a policy that does not parse stops the server with a clear error."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

from notify import policy


@register()
def notify_policy(app_configs: Any, **kwargs: Any) -> list[Error]:
    try:
        policy.parse(settings.HOOKBRIDGE_NOTIFY)
    except ValueError as exc:
        return [Error(f"HOOKBRIDGE_NOTIFY: {exc}", id="notify.E001")]
    return []
