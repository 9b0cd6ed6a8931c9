"""Everything a server process keeps in memory between requests, in one place.

The database is the truth and the channel layer carries hints between processes;
what is left is per-process bookkeeping. Each name below says who writes it and
who reads it. None of it is shared between processes, and all of it may be lost
on a restart without losing anything a user gave (questions, answers, events).
Per-request values (the token and connection of the request in hand) are
ContextVars in mcpapi.calls, not here. What an app keeps is in that app's own runtime
module (questions, tokens, hosts, dashboard, mcpapi, hooks); none writes another's.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import Counter
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeVar

# --- the interpreter's thread switching (set by each server's entry point) -------------------
# A worker runs its ORM on threads while its loop does the network. At Python's default 5 ms
# switch interval, a thread rendering the dashboards' HTML for an answer kept the loop from
# sending that answer to the waiting agent for up to 5 ms; at 0.5 ms the loop gets its turn
# sooner (bench: embedded answer -> return p50 at think 250 ms, 7.4 -> 6.2 ms, floor 3.8-4.1).
SWITCH_INTERVAL = 0.0005


def tune_thread_switching() -> None:
    sys.setswitchinterval(SWITCH_INTERVAL)


# --- work handed in at about the same moment, done in one go (questions.waiting, lifecycle.reporting)
T = TypeVar("T")
R = TypeVar("R")


class Batch(Generic[T, R]):
    """Items handed in while a write is under way go in the next write, together; each caller gets its own result.

    `write` takes the items in the order they came and returns one result per item (it hops to
    the database thread itself). Calls cut at once (a host restarting) and events reported flat
    out cost one trip to the database thread and one transaction per batch, not one each.
    """

    def __init__(self, write: Callable[[list[T]], Coroutine[Any, Any, list[R]]]) -> None:
        self.write = write
        self.queue: list[tuple[T, asyncio.Future[R]]] = []
        self.flushing: asyncio.Task[None] | None = None

    async def add(self, item: T) -> R:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[R] = loop.create_future()
        self.queue.append((item, done))
        if self.flushing is None or self.flushing.done() or self.flushing.get_loop() is not loop:
            self.flushing = loop.create_task(self._flush())
        return await done

    async def _flush(self) -> None:
        batch: list[tuple[T, asyncio.Future[R]]] = []
        try:
            await asyncio.sleep(0)  # the others handed in at this same moment queue theirs first
            while self.queue:
                batch, self.queue = self.queue, []
                try:
                    results = await self.write([item for item, _ in batch])
                except Exception as exc:
                    for _, done in batch:
                        if not done.done():
                            done.set_exception(exc)
                else:
                    for (_, done), result in zip(batch, results, strict=True):
                        if not done.done():
                            done.set_result(result)
                batch = []
        finally:
            # Cancelled (the loop is going): no caller may wait for a write that will never come.
            for _, done in [*batch, *self.queue]:
                if not done.done():
                    done.cancel()
            self.queue = []


# One per kind of work, made by its first user: "leavers" (calls marked as left), "reports" (lifecycle events).
batches: dict[str, Batch[Any, Any]] = {}


def batch(name: str, write: Callable[[list[T]], Coroutine[Any, Any, list[R]]]) -> Batch[T, R]:
    return batches.setdefault(name, Batch(write))


# --- the event loop the server runs on (core.broadcast) --------------------------
# Set by the ASGI entry point on the first request: on-commit hooks in worker threads hand
# their pushes to this loop. None outside a server (a management command, a test).
server_loop: asyncio.AbstractEventLoop | None = None
server_thread: int | None = None
# Pushes started on the loop; held here because the loop keeps only weak references to tasks.
push_tasks: set[asyncio.Task[None]] = set()
# broadcast.send_latest's throttle: when each key's last push was built (monotonic seconds),
# and the keys with a trailing push scheduled.
latest_lock = threading.Lock()
latest_sent: dict[str, float] = {}
latest_due: set[str] = set()

# --- background tasks, one of each per process (questions.sweeper, dashboard.watcher) --------
background_tasks: dict[str, asyncio.Task[None]] = {}


def keep_running(name: str, start: Callable[[], Coroutine[Any, Any, None]]) -> bool:
    """Run `start()` as this process's task `name` on the running loop, unless it runs already.

    True when it was started now (again, if the loop it ran on has gone).
    """
    task = background_tasks.get(name)
    if task is not None and not task.done():
        return False
    background_tasks[name] = asyncio.get_running_loop().create_task(start(), name=name)
    return True


# --- the cycle collector's bookkeeping (core.collector) -----------------------------
# Connections open in this process now, and those that ended after living a second or more since
# the frozen objects' garbage was last reclaimed; when that was (monotonic), and the wait before the next.
collector_open = 0
collector_ended = 0
collector_last_reclaim: float | None = None
collector_interval = 30.0
collector_ended_before = 0  # `collector_ended` at the last tick: none ended since, when equal
collector_due_since: float | None = None  # when a reclaim became due, while it waits for a quiet second

# --- whether this process is a web server (core.broadcast.bind_server_loop) ------------------
# False in mcp_stdio, which binds a loop for its pushes but serves no pages: links it writes name
# the running `serve` instead (core.presence.public_url), and its channel layer socket says it has no page
# (core.local_layer). None until this process is told (a management command never is).
serves_web: bool | None = None

# --- what one caller holds open here (core.limits.holding) ------------------------
# Live WebSockets, per ("token", id) or ("user", id) (core.consumers): HOOKBRIDGE_MAX_SOCKETS_PER_TOKEN.
sockets_per_owner: Counter[tuple[str, int]] = Counter()

# --- the thread waiting calls read their rows on (core.db.on_the_read_thread) -------
# Written once here; used by questions.asking. A thread (and connection) of its own, beside the
# one every other database call shares, so a woken call's read never queues behind the work of
# the request that answered it (rendering the dashboards), nor an answer behind many re-reads.
read_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hookbridge-reads")
