"""Issue 31: the default project, and everyone already here in it (staff as its admins)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import migrations


def forwards(apps: Any, schema_editor: Any) -> None:
    Project = apps.get_model("projects", "Project")
    Membership = apps.get_model("projects", "Membership")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    default, _ = Project.objects.get_or_create(is_default=True, defaults={"name": "default"})
    Membership.objects.bulk_create(
        [
            Membership(project=default, user=user, role="admin" if user.is_staff or user.is_superuser else "answerer")
            for user in User.objects.all()
        ],
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
