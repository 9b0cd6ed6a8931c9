"""The SQL that makes the audit record append-only in the database: audit/migrations/0002 runs it, and the
SQLite `flush` (audit/management/commands/flush.py) runs it again after emptying every table."""

from __future__ import annotations

TABLES = ("audit_entry", "audit_checkpoint")

POSTGRES_FUNCTION = """
CREATE OR REPLACE FUNCTION hookbridge_audit_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('hookbridge.audit_purge', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'the audit record is append-only: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""


def sqlite_triggers(table: str) -> list[str]:
    return [
        f"CREATE TRIGGER IF NOT EXISTS {table}_no_update BEFORE UPDATE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'the audit record is append-only: UPDATE on {table} refused'); END",
        f"CREATE TRIGGER IF NOT EXISTS {table}_no_delete BEFORE DELETE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'the audit record is append-only: DELETE on {table} refused'); END",
    ]
