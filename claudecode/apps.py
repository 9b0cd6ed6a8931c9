from __future__ import annotations

from django.apps import AppConfig


class ClaudeCodeConfig(AppConfig):
    name = "claudecode"
    verbose_name = "Claude Code hooks and approvals"
    default_auto_field = "django.db.models.BigAutoField"
