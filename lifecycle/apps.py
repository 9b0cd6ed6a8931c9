from __future__ import annotations

from django.apps import AppConfig


class LifecycleConfig(AppConfig):
    name = "lifecycle"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connects the receivers that push lifecycle and session changes to pages (lifecycle.signals).
        from lifecycle import live  # noqa: F401
