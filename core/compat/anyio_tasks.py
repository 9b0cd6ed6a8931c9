"""anyio's TaskHandle (4.14 and later), which keeps a cancelled task's frames in a reference cycle.

- `free_cancelled_tasks()`: every task the SDK starts in a task group runs through
  `TaskHandle._run_coro`, which keeps the exception the task ended with (`_exception`). A cancelled
  task's CancelledError carries a traceback through the task's frames, whose locals lead back to
  the handle: a cycle, so reference counting never frees it and the whole call stays in memory
  until a full run of the cycle collector. Each call an agent hung up left about 400 such objects
  (counted on 1,000 calls); reclaiming 5,000 hung-up calls at once stopped the worker for 2-4 s
  (bench/agents.py, docs/performance.md). Once a task has finished by cancellation, its exception's
  traceback is dropped, so the call is freed the moment it ends. Nothing reads a cancellation's
  traceback; a task that failed keeps its own.
"""

from __future__ import annotations

import asyncio
from typing import Any

from anyio._core._tasks import TaskHandle

APPLIED = "_hookbridge_frees_cancelled_tasks"


def free_cancelled_tasks() -> None:
    """Patch TaskHandle once per process (a server's and stdio's entry points call this)."""
    if getattr(TaskHandle, APPLIED, False):
        return
    run_coro = TaskHandle._run_coro

    async def _run_coro(self: Any) -> None:
        try:
            await run_coro(self)
        finally:
            ended_with = getattr(self, "_exception", None)  # unset while the task returned normally
            if isinstance(ended_with, asyncio.CancelledError):
                ended_with.__traceback__ = None
            del self, ended_with  # this frame is in the traceback too, while it propagates

    TaskHandle._run_coro = _run_coro  # type: ignore[method-assign]
    setattr(TaskHandle, APPLIED, True)
