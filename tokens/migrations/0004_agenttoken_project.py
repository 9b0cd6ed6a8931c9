"""Issue 31: a token works in one project (earlier tokens: the default one), or in every project (empty)."""

import django.db.models.deletion
from django.db import migrations, models

from projects.migrating import filler


class Migration(migrations.Migration):
    dependencies = [
        ("tokens", "0003_owner_and_oauth_client"),
        ("projects", "0002_default_project"),
    ]

    operations = [
        migrations.AddField(
            "agenttoken",
            "project",
            models.ForeignKey(
                blank=True,
                help_text="The project its work belongs to; empty: every project (a bot for the whole team).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="tokens",
                to="projects.project",
            ),
        ),
        migrations.RunPython(filler(("tokens", "agenttoken")), migrations.RunPython.noop),
    ]
