from __future__ import annotations

from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = "Approvals: rules and policies"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connects the receivers that clear this process's copy of the rules and policies when one is saved.
        from approvals import grants, policies, rules  # noqa: F401
