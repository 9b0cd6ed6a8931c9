from __future__ import annotations

from django.apps import AppConfig


class TokensConfig(AppConfig):
    name = "tokens"
    verbose_name = "Agent tokens"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from tokens import signals  # noqa: F401  (connects the receivers)
