from __future__ import annotations

from django.apps import AppConfig


class ClaudeCodeConfig(AppConfig):
    name = "claudecode"
    verbose_name = "Claude Code hooks and approvals"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connects the receivers that clear this process's copy of the rules when one is saved.
        from claudecode import policy  # noqa: F401
