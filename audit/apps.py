from __future__ import annotations

from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit record"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Sign-ins and changes to people, from Django's own signals; the settings' checks.
        from audit import checks, receivers  # noqa: F401
