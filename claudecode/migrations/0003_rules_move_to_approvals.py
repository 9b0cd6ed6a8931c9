"""Issue 53: the team's rules are the approvals app's now; the table stays, only Django's idea of its owner moves."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("claudecode", "0002_rules_per_project"),
        ("approvals", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel("ApprovalRule")]),
    ]
