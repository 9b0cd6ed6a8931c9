"""Issue 31: sessions and lifecycle events belong to a project (the default for earlier ones); the project an agent names is a session's project_name."""

import django.db.models.deletion
from django.db import migrations, models

from projects.migrating import filler


class Migration(migrations.Migration):
    dependencies = [
        ("lifecycle", "0006_claude_code_hooks"),
        ("projects", "0002_default_project"),
        ("tokens", "0004_agenttoken_project"),
    ]

    operations = [
        migrations.RenameField("agentsession", "project", "project_name"),
        migrations.AddField("agentsession", "project", models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="projects.project")),
        migrations.AddField("lifecycleevent", "project", models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="projects.project")),
        migrations.RunPython(filler(("lifecycle", "AgentSession"), ("lifecycle", "LifecycleEvent")), migrations.RunPython.noop),
        migrations.AlterField("agentsession", "project", models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.project",
            )),
        migrations.AlterField("lifecycleevent", "project", models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="projects.project",
            )),
    ]
