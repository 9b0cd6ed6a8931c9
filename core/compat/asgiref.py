"""asgiref's sync bridge internals: the hook around a sync call's thread, the shared thread, the nesting mark.

- `AroundTheThread`: SyncToAsync runs each call through `thread_handler` in the worker thread;
  core.db looks after the thread's database connection there, before and after the call
  (a SQLite connection kept open saved about 0.6 ms per hop).
- `shared_sync_executor`: the one thread every thread-sensitive call shares outside a request;
  the token-API views run their bodies there, where the connection is already open.
- `under_async_to_sync`: whether this coroutine runs inside async_to_sync (WSGI, Django's test
  client), where a hop must stay in the calling thread to see the caller's transaction.
- `calling_loop`: the event loop whose sync_to_async call this worker thread runs.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import AsyncToSync, SyncToAsync


class AroundTheThread(SyncToAsync[..., Any]):
    """SyncToAsync that calls `around()` in the worker thread before and after each call."""

    def around(self) -> None:
        pass

    def thread_handler(self, loop: Any, *args: Any, **kwargs: Any) -> Any:
        self.around()
        try:
            return super().thread_handler(loop, *args, **kwargs)  # type: ignore[no-untyped-call]
        finally:
            self.around()


def shared_sync_executor() -> ThreadPoolExecutor:
    executor: ThreadPoolExecutor = SyncToAsync.single_thread_executor
    return executor


def under_async_to_sync() -> bool:
    return getattr(AsyncToSync.executors, "current", None) is not None


def calling_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop that handed this thread its current sync_to_async call (which may have stopped since), or
    None in a thread no loop called into.

    Read from where SyncToAsync records it for async_to_sync.
    """
    local = SyncToAsync.threadlocal
    if getattr(local, "main_event_loop_pid", None) != os.getpid():
        return None
    loop: asyncio.AbstractEventLoop | None = getattr(local, "main_event_loop", None)
    return loop
