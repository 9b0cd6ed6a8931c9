from __future__ import annotations

from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The watcher notes what this process pushed to its dashboards (questions and hooks signals).
        from dashboard import feed, status, watcher  # noqa: F401
        # events: the JSON stream for programs (/ws/events/), from the same signals.
