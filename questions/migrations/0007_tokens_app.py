# Issue 14: AgentToken now lives in `tokens`. State only: the table and the foreign keys
# in the database are unchanged.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('questions', '0006_agent_left'),
        ('tokens', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='question',
                    name='asker',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='tokens.agenttoken'),
                ),
                migrations.AlterField(
                    model_name='answer',
                    name='answered_by_token',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='tokens.agenttoken'),
                ),
            ],
            database_operations=[],
        ),
    ]
