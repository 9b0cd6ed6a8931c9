"""Issue 31: every question belongs to a project; those asked before, to the default."""

import django.db.models.deletion
from django.db import migrations, models

from projects.migrating import filler


class Migration(migrations.Migration):
    dependencies = [
        ("questions", "0013_answer_images"),
        ("projects", "0002_default_project"),
        ("tokens", "0004_agenttoken_project"),
    ]

    operations = [
        migrations.AddField("question", "project", models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="projects.project")),
        migrations.RunPython(filler(("questions", "question")), migrations.RunPython.noop),
        migrations.AlterField("question", "project", models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.project",
            )),
    ]
