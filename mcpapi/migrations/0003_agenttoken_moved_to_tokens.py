# Issue 14: AgentToken now lives in `tokens` (tokens/migrations/0001). Once every foreign key
# points there, the old model state goes; the table stays, now owned by tokens.AgentToken.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('mcpapi', '0002_token_scopes'),
        ('tokens', '0001_initial'),
        ('questions', '0007_tokens_app'),
        ('lifecycle', '0005_moved_models'),
        ('hooks', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='AgentToken')],
            database_operations=[],
        ),
    ]
