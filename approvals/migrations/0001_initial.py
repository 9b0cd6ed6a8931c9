"""Issue 53: the team's rules move here from the app that was `claudecode` (same table), and approval policies.

Issue 58 took that app away (its hosts are `hosts/` now, with no models). A database it made has the table already
(`claudecode_approvalrule`, and `claudecode` rows in django_migrations, which nothing reads any more); a new one
gets it here. A database from before issue 31 has the table in its first shape (a `project` folder, no project
link): it is brought to this one, as claudecode's 0002 did. 0005 then names the table for this app.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import approvals.models

TABLE = "claudecode_approvalrule"


def make_or_bring_up_the_table(apps, schema_editor):  # type: ignore[no-untyped-def]
    """The rules' table as this migration's state has it: made, or kept with every row (see above)."""
    rule = apps.get_model("approvals", "ApprovalRule")
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        if TABLE not in connection.introspection.table_names(cursor):
            schema_editor.create_model(rule)
            return
        columns = {column.name for column in connection.introspection.get_table_description(cursor, TABLE)}
    if "folder" in columns:
        return
    first = models.CharField(blank=True, max_length=500)
    first.set_attributes_from_name("project")
    first.model = rule
    schema_editor.alter_field(rule, first, rule._meta.get_field("folder"))
    schema_editor.add_field(rule, rule._meta.get_field("project"))


def drop_the_table(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.delete_model(apps.get_model("approvals", "ApprovalRule"))


class Migration(migrations.Migration):
    initial = True

    dependencies = [
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
                    options={"ordering": ["position", "id"], "db_table": TABLE},
                ),
            ]
        ),
        migrations.RunPython(make_or_bring_up_the_table, drop_the_table),
    ]
