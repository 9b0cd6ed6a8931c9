"""Issue 31: every hook run belongs to a project; earlier ones, to the default."""

import django.db.models.deletion
from django.db import migrations, models

from projects.migrating import filler


class Migration(migrations.Migration):
    dependencies = [
        ("hooks", "0002_tables_named_for_their_app"),
        ("projects", "0002_default_project"),
        ("tokens", "0004_agenttoken_project"),
    ]

    operations = [
        migrations.AddField("hookrun", "project", models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="projects.project")),
        migrations.RunPython(filler(("hooks", "hookrun")), migrations.RunPython.noop),
        migrations.AlterField("hookrun", "project", models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.project",
            )),
    ]
