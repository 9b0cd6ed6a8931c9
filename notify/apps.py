from __future__ import annotations

from django.apps import AppConfig


class NotifyConfig(AppConfig):
    name = "notify"
    verbose_name = "Notifying people"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # What a question's ask and end set going (notify.scheduling), and the settings' checks.
        from notify import checks, scheduling  # noqa: F401
