"""Issue 53: the team's rules move here from claudecode (same table), and approval policies."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import approvals.models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("claudecode", "0002_rules_per_project"),
        ("projects", "0002_default_project"),
        ("tokens", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApprovalRule",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("position", models.PositiveIntegerField(default=100)),
                        ("tool_pattern", models.CharField(max_length=200, validators=[approvals.models._compiles])),
                        ("input_pattern", models.CharField(blank=True, max_length=500, validators=[approvals.models._compiles])),
                        ("folder", models.CharField(blank=True, max_length=500)),
                        ("action", models.CharField(choices=[("allow", "Allow"), ("deny", "Deny")], max_length=8)),
                        ("message", models.CharField(blank=True, max_length=1000)),
                        ("enabled", models.BooleanField(default=True)),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "project",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="projects.project",
                            ),
                        ),
                    ],
                    options={"ordering": ["position", "id"], "db_table": "claudecode_approvalrule"},
                ),
            ]
        ),
    ]
