"""For the apps' migrations of issue 31: every existing row of a model moves to the default project."""

from __future__ import annotations

from typing import Any


def filler(*models: tuple[str, str]) -> Any:
    def forwards(apps: Any, schema_editor: Any) -> None:
        Project = apps.get_model("projects", "Project")
        default, _ = Project.objects.get_or_create(is_default=True, defaults={"name": "default"})
        for app_label, name in models:
            apps.get_model(app_label, name).objects.filter(project__isnull=True).update(project=default)

    return forwards
