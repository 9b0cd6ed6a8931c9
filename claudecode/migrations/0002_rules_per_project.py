"""Issue 31: a team rule may be one project's (kept by its admins); the folder it was limited to is `folder`."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("claudecode", "0001_initial"),
        ("projects", "0002_default_project"),
    ]

    operations = [
        migrations.RenameField("approvalrule", "project", "folder"),
        migrations.AlterField(
            "approvalrule",
            "folder",
            models.CharField(
                blank=True,
                help_text="Only for agents working in this folder (or below it); empty: any folder.",
                max_length=500,
            ),
        ),
        migrations.AddField(
            "approvalrule",
            "project",
            models.ForeignKey(
                blank=True,
                help_text="Only for this project's agents; empty: every project's (a superuser's rule).",
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="projects.project",
            ),
        ),
    ]
