"""database_sync_to_async for the MCP tools and WebSocket consumers, keeping a SQLite connection open.

Channels' version closes the thread's connection after every call (CONN_MAX_AGE is 0,
as Django advises under ASGI, where each request runs in a thread of its own).
Channels runs no ThreadSensitiveContext, so every call made through here runs in
asgiref's one shared sync thread: its connection can live from call to call. On
SQLite that saves opening a connection (registering Django's SQL functions and
running the PRAGMAs, about 0.6 ms) several times per question. On PostgreSQL the
connection is still closed after each call: a persistent one would hang on a
server that went away, where a new one fails within the connect timeout.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import SyncToAsync
from django.db import connections


def _keep_sqlite_connections() -> None:
    for connection in connections.all(initialized_only=True):
        if connection.vendor != "sqlite":
            connection.close_if_unusable_or_obsolete()
        elif connection.connection is not None and connection.errors_occurred and not connection.is_usable():
            connection.close()


class DatabaseSyncToAsync(SyncToAsync[..., Any]):
    def thread_handler(self, loop: Any, *args: Any, **kwargs: Any) -> Any:
        _keep_sqlite_connections()
        try:
            return super().thread_handler(loop, *args, **kwargs)  # type: ignore[no-untyped-call]
        finally:
            _keep_sqlite_connections()


database_sync_to_async = DatabaseSyncToAsync
