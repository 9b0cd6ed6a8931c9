# AgentToken moved here from mcpapi (issue 14). The table and its rows stay where they
# are (mcpapi_agenttoken): this migration only tells Django's model state that the model
# now belongs to `tokens`, and moves its content type, so admin permissions and log
# entries follow it. mcpapi.0003 removes the old state once every foreign key points here.

import django.utils.timezone
from django.db import migrations, models


def move_content_type(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="mcpapi", model="agenttoken").update(app_label="tokens")


def move_content_type_back(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="tokens", model="agenttoken").update(app_label="mcpapi")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("mcpapi", "0002_token_scopes"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="AgentToken",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.CharField(help_text="Who is asking: shown on the dashboard.", max_length=100)),
                        ("token_hash", models.CharField(editable=False, max_length=64, unique=True)),
                        ("prefix", models.CharField(editable=False, max_length=12)),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                        ("last_used_at", models.DateTimeField(blank=True, editable=False, null=True)),
                        ("revoked_at", models.DateTimeField(blank=True, null=True)),
                        ("expires_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "scope",
                            models.CharField(
                                choices=[
                                    ("agent", "Agent: calls the MCP tools"),
                                    ("answer", "Answering: answers and dismisses questions through the JSON API"),
                                ],
                                default="agent",
                                max_length=16,
                            ),
                        ),
                    ],
                    options={"ordering": ["name", "created_at"], "db_table": "mcpapi_agenttoken"},
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(move_content_type, move_content_type_back),
    ]
