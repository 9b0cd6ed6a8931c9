from __future__ import annotations

from django.apps import AppConfig


class McpapiConfig(AppConfig):
    name = "mcpapi"
    default_auto_field = "django.db.models.BigAutoField"
