"""The database itself refuses to change or delete an audit entry or checkpoint.

PostgreSQL: a trigger raises on UPDATE and DELETE unless the transaction set `hookbridge.audit_purge` to "on"
(only the retention purge does, behind a signed checkpoint). SQLite: triggers that abort UPDATE and DELETE; the
purge drops and re-creates them in its own transaction. Whoever gets past either (a superuser, the file itself)
is found by `manage.py audit verify`. The chain's head row is made here, so every writer locks the same row.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

from audit.append_only import POSTGRES_FUNCTION, TABLES, sqlite_triggers

def forwards(apps: Any, schema_editor: Any) -> None:
    apps.get_model("audit", "Head").objects.get_or_create(pk=1)
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_FUNCTION, params=None)  # its RAISE has % of its own, not placeholders
        for table in TABLES:
            schema_editor.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION hookbridge_audit_append_only()"
            )
    elif vendor == "sqlite":
        for table in TABLES:
            for statement in sqlite_triggers(table):
                schema_editor.execute(statement)


def backwards(apps: Any, schema_editor: Any) -> None:
    vendor = schema_editor.connection.vendor
    for table in TABLES:
        if vendor == "postgresql":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}")
        elif vendor == "sqlite":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_no_update")
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_no_delete")


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
