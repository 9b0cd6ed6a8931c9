from __future__ import annotations

from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Installed for its template tags (`{% load formatting %}`); it has no models."""

    name = "core"
    verbose_name = "Hook Bridge core"
