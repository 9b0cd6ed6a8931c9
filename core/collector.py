"""Python's cycle collector on a worker that holds thousands of calls open.

Every waiting call keeps about 700 objects alive (the SDK's task groups, cancel scopes, streams
and coroutines; counted with 1,000 calls held). Python's collector scans every object it tracks
whenever the long-lived ones have grown by a quarter, so with 5,000 calls held each full scan
stopped the whole worker for up to 1.7 s, about every 4 s while calls came in: every request in
that moment (a call's response headers, an answer, a page) waited for it. That, not our own
work, was the slowest 1 % of bench/agents.py's response headers (4.2 s; 0.07 s with this).

So once a second everything that has lived that long is frozen (`gc.freeze`): moved out of the
collector's scans, which then see only what is younger. Frozen objects are still freed by their
reference counts when a call ends (core.compat.anyio_tasks removes the one cycle every hung-up
call used to leave); only cyclic garbage stays frozen. That is reclaimed by one full collection
once the connections that ended (after living a second or more) since the last outnumber those
still open, so garbage never outweighs what is alive by much. A full collection pauses the worker
for as long as it has objects, so a due reclaim waits for a second in which no connection ended
(agents hanging up together are let go first, and their objects freed, before anything is
scanned); a reclaim that finds little waits twice as long before the next (up to an hour), and
one that finds much brings the wait back to its minimum.

`HOOKBRIDGE_GC_FREEZE=0` leaves Python's collector as it is.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings

from core import runtime

logger = logging.getLogger(__name__)

TASK = "collector"
FREEZE_EVERY = 1.0  # seconds: what has lived this long leaves the collector's scans
MIN_ENDED = 200  # fewer ended connections than this never make a reclaim worth a full scan
MIN_INTERVAL = 30.0  # seconds between reclaims, at least ...
MAX_INTERVAL = 3600.0  # ... and at most, however little they find
MAX_DELAY = 10.0  # seconds a due reclaim waits for a second in which no connection ended
WORTH_IT = 0.05  # a reclaim that frees less than this share of the frozen objects found little

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def counting_connections(app: ASGIApp) -> ASGIApp:
    """`app`, counting its connections open now and those that ended after living FREEZE_EVERY or more."""

    async def counted(scope: dict[str, Any], receive: Any, send: Any) -> None:
        started = time.monotonic()
        runtime.collector_open += 1
        try:
            await app(scope, receive, send)
        finally:
            runtime.collector_open -= 1
            if time.monotonic() - started >= FREEZE_EVERY:
                runtime.collector_ended += 1

    return counted


def tick() -> str:
    """Freeze what has lived a second, or reclaim the garbage frozen so far: "froze" or "reclaimed"."""
    ended, still_open = runtime.collector_ended, runtime.collector_open
    just_ended, runtime.collector_ended_before = ended - runtime.collector_ended_before, ended
    now = time.monotonic()
    last = runtime.collector_last_reclaim
    if ended < max(MIN_ENDED, still_open) or (last is not None and now - last < runtime.collector_interval):
        runtime.collector_due_since = None
        gc.freeze()
        return "froze"
    if runtime.collector_due_since is None:
        runtime.collector_due_since = now
    if just_ended and now - runtime.collector_due_since < MAX_DELAY:
        # Connections are still ending (agents hanging up together): their objects are still
        # alive, and a full scan now would pause the worker for all of them while it is busiest
        # letting them go. It waits for a second without an ending, or MAX_DELAY at most.
        gc.freeze()
        return "froze"
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    collected = gc.collect()
    gc.freeze()
    runtime.collector_ended = runtime.collector_ended_before = 0
    runtime.collector_due_since = None
    runtime.collector_last_reclaim = time.monotonic()
    if collected < WORTH_IT * frozen:
        runtime.collector_interval = min(runtime.collector_interval * 2, MAX_INTERVAL)
    else:
        runtime.collector_interval = MIN_INTERVAL
    logger.debug(
        "collector: %d connections ended (%d open): %d of %d frozen objects collected in %.0f ms; next in %.0f s",
        ended, still_open, collected, frozen, (runtime.collector_last_reclaim - now) * 1000,
        runtime.collector_interval,
    )  # fmt: skip
    return "reclaimed"


async def _tick_forever() -> None:
    while True:
        await asyncio.sleep(FREEZE_EVERY)
        tick()


def ensure_running() -> None:
    """Started by the first request a server process takes (as the sweeper is), unless turned off."""
    if settings.HOOKBRIDGE_GC_FREEZE:
        runtime.keep_running(TASK, _tick_forever)
