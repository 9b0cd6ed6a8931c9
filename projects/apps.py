from __future__ import annotations

from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"
    verbose_name = "Projects and roles"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from projects import live, signals  # noqa: F401  (connects the receivers)
