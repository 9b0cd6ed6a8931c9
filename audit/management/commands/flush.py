"""Django's `flush` (remove ALL data), which SQLite's append-only triggers on the audit record would refuse row by
row: on SQLite they are dropped for the flush and made again after it, in its transaction. PostgreSQL's flush
truncates, which its trigger (on UPDATE and DELETE) lets through. Wiping the whole database wipes the record too;
nothing less does."""

from __future__ import annotations

from typing import Any

from django.core.management.commands import flush
from django.db import connections, transaction

from audit import append_only


class Command(flush.Command):
    def handle(self, **options: Any) -> None:
        connection = connections[options["database"]]
        if connection.vendor != "sqlite":
            super().handle(**options)
            return
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            for table in append_only.TABLES:
                cursor.execute(f"DROP TRIGGER IF EXISTS {table}_no_update")
                cursor.execute(f"DROP TRIGGER IF EXISTS {table}_no_delete")
            super().handle(**options)
            for table in append_only.TABLES:
                for statement in append_only.sqlite_triggers(table):
                    cursor.execute(statement)
