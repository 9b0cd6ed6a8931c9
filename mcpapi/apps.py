from __future__ import annotations

from django.apps import AppConfig


class McpapiConfig(AppConfig):
    name = "mcpapi"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured

        from hooks import config as hooks_config
        from mcpapi import toolsets

        hooks_config.reserve_tool_names(toolsets.builtin_tool_names())

        try:
            toolsets.parse(settings.HOOKBRIDGE_DEFAULT_TOOLSETS)
        except toolsets.UnknownToolset as exc:
            raise ImproperlyConfigured(f"HOOKBRIDGE_DEFAULT_TOOLSETS: {exc}") from None
