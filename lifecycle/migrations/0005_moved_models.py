# Issue 14: AgentToken now lives in `tokens`, HookRun and HookRunDirectory in `hooks`.
# State only: the tables and the foreign keys in the database are unchanged.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('lifecycle', '0004_hook_runs'),
        ('tokens', '0001_initial'),
        ('hooks', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='lifecycleevent',
                    name='asker',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='tokens.agenttoken'),
                ),
                migrations.AlterField(
                    model_name='agentsession',
                    name='token',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='tokens.agenttoken'),
                ),
                migrations.DeleteModel(name='HookRunDirectory'),
                migrations.DeleteModel(name='HookRun'),
            ],
            database_operations=[],
        ),
    ]
