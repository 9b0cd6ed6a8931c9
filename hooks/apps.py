from __future__ import annotations

from django.apps import AppConfig


class HooksConfig(AppConfig):
    name = "hooks"
    verbose_name = "Hook runs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connects the receivers that push run changes to pages (hooks.signals).
        from hooks import live  # noqa: F401
