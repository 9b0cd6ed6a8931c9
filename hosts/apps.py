from __future__ import annotations

from django.apps import AppConfig


class HostsConfig(AppConfig):
    name = "hosts"
    verbose_name = "Agent hosts: their hooks, approvals and settings files"
    default_auto_field = "django.db.models.BigAutoField"
