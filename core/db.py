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

from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

from django.db import connections

from core import runtime
from core.compat.asgiref import AroundTheThread, shared_sync_executor, under_async_to_sync

T = TypeVar("T")


def _keep_sqlite_connections() -> None:
    for connection in connections.all(initialized_only=True):
        if connection.vendor != "sqlite":
            connection.close_if_unusable_or_obsolete()
        elif connection.connection is not None and connection.errors_occurred and not connection.is_usable():
            connection.close()


class DatabaseSyncToAsync(AroundTheThread):
    def around(self) -> None:
        _keep_sqlite_connections()


database_sync_to_async = DatabaseSyncToAsync


def _on(executor: ThreadPoolExecutor, func: Callable[..., T]) -> Callable[..., Coroutine[Any, Any, T]]:
    """`func` run on `executor`, unless called under async_to_sync (WSGI, Django's test client):
    then in the calling thread, whose connection holds the caller's transaction."""
    there = DatabaseSyncToAsync(func, thread_sensitive=False, executor=executor)
    nested = DatabaseSyncToAsync(func)

    async def call(*args: Any, **kwargs: Any) -> T:
        if under_async_to_sync():
            return cast(T, await nested(*args, **kwargs))
        return cast(T, await there(*args, **kwargs))

    return call


def on_the_database_thread(func: Callable[..., T]) -> Callable[..., Coroutine[Any, Any, T]]:
    """`func` run where the MCP tools' database calls run, even from inside a Django request.

    Django gives each request a thread of its own (ThreadSensitiveContext), and a new thread
    opens a new SQLite connection and closes it after the response: for a JSON API request that
    was about a fifth of its time (bench: a bare answer POST that 404s). asgiref's shared sync
    thread keeps its connection, so the token-API views run their bodies there.
    """
    return _on(shared_sync_executor(), func)


def on_the_read_thread(func: Callable[..., T]) -> Callable[..., Coroutine[Any, Any, T]]:
    """`func` (a read) run on the thread waiting calls read their rows on (runtime.read_executor).

    A call woken by an answer reads its row at once; on the shared database thread that read
    waited for the rest of the answering request's job (the dashboards' HTML), and an answer
    waited behind the re-reads of every call held in the worker.
    """
    return _on(runtime.read_executor, func)
