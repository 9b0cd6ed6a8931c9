"""Issue 37: a notify policy belongs to a project by a foreign key, no longer by a name.

A policy named as an existing project (case aside) moves to that project. Any other (a name agents gave
their sessions, or a second policy for one project) is kept, disabled, with a note saying why, for a
superuser to give it a project in the admin or delete it.
"""

from typing import Any

import django.db.models.deletion
from django.db import migrations, models


def to_projects(apps: Any, schema_editor: Any) -> None:
    NotifyPolicy = apps.get_model("notify", "NotifyPolicy")
    Project = apps.get_model("projects", "Project")
    taken: set[int] = set()
    for policy in NotifyPolicy.objects.order_by("id"):
        project = Project.objects.filter(name__iexact=policy.former_name.strip()).first()
        if project is not None and project.pk not in taken:
            taken.add(project.pk)
            policy.project, policy.enabled = project, True
        elif project is not None:
            policy.enabled = False
            policy.note = (
                f"Disabled by the upgrade: project '{project.name}' already had a policy, and a project has one. "
                "Merge the two, then delete this one."
            )
        else:
            policy.enabled = False
            policy.note = (
                f"Disabled by the upgrade: '{policy.former_name}' is no project's name. Before, a policy was chosen "
                "by the project label an agent gave its session, which let any agent route its questions to it; "
                "now a policy belongs to a project. Choose its project and enable it, or delete it."
            )
        policy.save(update_fields=["project", "enabled", "note"])


def to_names(apps: Any, schema_editor: Any) -> None:
    NotifyPolicy = apps.get_model("notify", "NotifyPolicy")
    for policy in NotifyPolicy.objects.select_related("project"):
        if policy.project is not None:
            policy.former_name = policy.project.name
            policy.save(update_fields=["former_name"])


class Migration(migrations.Migration):
    dependencies = [
        ("notify", "0002_policy_named_for_a_project"),
        ("projects", "0002_default_project"),
    ]

    operations = [
        migrations.RenameField(model_name="notifypolicy", old_name="project", new_name="former_name"),
        migrations.AlterField(
            model_name="notifypolicy",
            name="former_name",
            field=models.CharField(blank=True, editable=False, max_length=200),
        ),
        migrations.AddField(
            model_name="notifypolicy",
            name="project",
            field=models.OneToOneField(
                blank=True,
                help_text="The project whose questions this policy escalates (its admins keep it).",
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="notify_policy",
                to="projects.project",
            ),
        ),
        migrations.AddField(
            model_name="notifypolicy",
            name="enabled",
            field=models.BooleanField(default=True, help_text="A disabled policy escalates nothing."),
        ),
        migrations.AddField(
            model_name="notifypolicy",
            name="note",
            field=models.TextField(blank=True, editable=False),
        ),
        migrations.RunPython(to_projects, to_names),
        migrations.AlterModelOptions(
            name="notifypolicy",
            options={"ordering": ["project__name", "id"], "verbose_name_plural": "notify policies"},
        ),
        migrations.AddConstraint(
            model_name="notifypolicy",
            constraint=models.CheckConstraint(
                condition=models.Q(("enabled", False), ("project__isnull", False), _connector="OR"),
                name="an_enabled_policy_has_a_project",
            ),
        ),
    ]
