from __future__ import annotations

from django.apps import AppConfig


class McpapiConfig(AppConfig):
    name = "mcpapi"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured

        from hooks import config as hooks_config
        from mcpapi import toolset_names

        hooks_config.reserve_tool_names(builtin_tool_names)

        try:
            toolset_names.parse(settings.HOOKBRIDGE_DEFAULT_TOOLSETS)
        except toolset_names.UnknownToolset as exc:
            raise ImproperlyConfigured(f"HOOKBRIDGE_DEFAULT_TOOLSETS: {exc}") from None


def builtin_tool_names() -> frozenset[str]:
    # Imported here, at the first discovery of hooks: the tool sets load the MCP SDK (0.6 s of a start).
    from mcpapi import toolsets

    return toolsets.builtin_tool_names()
