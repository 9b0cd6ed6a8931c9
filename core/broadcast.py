"""Pushing HTML to every open dashboard through the channel layer.

Pushes are hints (the database row is the truth), so sending one never blocks
the code that sends it. Inside the server, on-commit hooks run in worker threads;
they hand the send to the server's event loop and go on. Waiting for it instead
(async_to_sync) would park the thread until the loop ran it, and a loop that has
stopped for shutdown never does: the interpreter then hangs joining that thread.

What a page shows as "the state now" (the status bar, a session's page) goes
through send_latest: a burst of changes becomes a few pushes, the last one
rendered after the last change. Without it, 100 lifecycle events a second put
100 renders a second on the database thread and a queue on every dashboard's
consumer that drained slower than it filled: pushes arrived seconds late.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from core import runtime
from core.compat.asgiref import calling_loop
from core.db import database_sync_to_async

logger = logging.getLogger(__name__)

# Dashboards that see and answer every project: every push, rendered once for all of them.
DASHBOARD_GROUP = "dashboard"
# Dashboards that see some projects (issue 31): each joins its projects' groups, and this one, where it
# hears that something it counts across projects (the status bar, the pending count) changed.
PARTIAL_GROUP = "dashboard.partial"
# Every live page: who sees what changed (projects.signals.access_changed), so each reconnects.
ACCESS_GROUP = "access"


def project_group(project_id: int) -> str:
    return f"dashboard.project.{project_id}"


def owner_group(kind: str, pk: int) -> str:
    """Every live socket of one person ("user") or one token ("token"), in every worker: what taking access away
    closes (issue 37)."""
    return f"owner.{kind}.{pk}"


def access_revoked(kind: str, pk: int) -> None:
    """A person's or token's access was taken away: each of their open sockets closes (core.consumers.REVOKED)."""
    send(owner_group(kind, pk), {"type": "access.revoked"})


def access_changed_for(kind: str, pk: int) -> None:
    """What one person may see changed (a superuser demoted): their pages reconnect and see what they may now."""
    send(owner_group(kind, pk), {"type": "access.changed"})


# One group and message to send; what a send_latest builder returns.
Push = tuple[str, dict[str, Any]]

# At most one push per key in this interval, per process: 4 a second is as much as a person reads. At 20 a
# second, one token's flood of hook or lifecycle events had the worker render the status bar (twice: its rows
# and its marks) about as long as it spent on the events themselves (py-spy, bench/fairness.py, issue 54).
LATEST_INTERVAL = 0.25


def bind_server_loop(*, serves_web: bool = True) -> None:
    """Remember the event loop the server runs on: the ASGI entry point, and mcp_stdio (which serves no pages)."""
    runtime.server_loop, runtime.server_thread = asyncio.get_running_loop(), threading.get_ident()
    runtime.serves_web = serves_web


def _log_failure(future: Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.warning("A dashboard push failed", exc_info=future.exception())


def send(group: str, message: dict[str, Any]) -> None:
    """Send from sync code (on-commit hooks); a failure is logged, never raised."""
    layer = get_channel_layer()
    # Outside the server (a test), a worker thread of the loop that called it hands the send to that loop too:
    # waiting there parks the thread until the loop runs it, and one that stopped never does.
    loop = runtime.server_loop or calling_loop()
    if loop is None:
        # No loop at all (a management command): nothing to hang on, so just wait.
        try:
            async_to_sync(layer.group_send)(group, message)
        except Exception:
            logger.warning("Could not send %s to group %s", message.get("type"), group, exc_info=True)
        return
    if threading.get_ident() == runtime.server_thread:
        task = loop.create_task(layer.group_send(group, message))
        runtime.push_tasks.add(task)
        task.add_done_callback(runtime.push_tasks.discard)
        return
    if not loop.is_running():  # the loop stopped (a test that ended): a push would wait forever, for no one
        logger.info("Dropped %s for group %s: its event loop has stopped", message.get("type"), group)
        return
    try:
        future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
    except RuntimeError:  # the loop is closed: the server is gone
        logger.info("Dropped %s for group %s: the server is shutting down", message.get("type"), group)
        return
    future.add_done_callback(_log_failure)


def heard(*groups: str) -> bool:
    """Whether a push to any of `groups` may reach someone, so it is worth rendering: False only where the layer
    knows (the embedded default's, with no page open in this process or any other local one on the database).

    Rendering a card nobody sees was a third of an ask's time on a worker without dashboards open, an agent's
    server answered from Slack or the API (py-spy, bench/profile.py held, issue 60). On Redis any worker may hold
    the page: always True there.
    """
    nobody = getattr(get_channel_layer(), "heard_by_nobody", None)
    return nobody is None or not nobody(groups)


def dashboards_heard() -> bool:
    """Whether any dashboard may hear a push: each one is in one of these two groups, whatever else it joins."""
    return heard(DASHBOARD_GROUP, PARTIAL_GROUP)


def when_heard(*groups: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A signal receiver that renders a push for `groups` runs only when someone may hear it (heard)."""

    def decorate(render: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(render)
        def receiver(*args: Any, **kwargs: Any) -> None:
            if heard(*groups):
                render(*args, **kwargs)

        return receiver

    return decorate


def to_dashboards(
    html: str, *, project: int | None = None, item: str | None = None, view: str | None = None, recount: bool = False
) -> None:
    """Push `html` to the dashboards that see every project; to those that see some, what they may see.

    Without `project`, the push is for everyone (a channel's health). With it, dashboards that see that
    project get `item` (default `html`: a push of `html` must then hold nothing counted across projects),
    or `view`, when given, if they only look there; `recount`: they count their own pending questions again.
    """
    send(DASHBOARD_GROUP, {"type": "dashboard.html", "html": html})
    if project is None:
        send(PARTIAL_GROUP, {"type": "dashboard.html", "html": html})
        return
    message = {"type": "project.html", "project": project, "html": html if item is None else item, "view": view}
    send(project_group(project), {**message, "recount": recount})


def send_latest(key: str, build: Callable[[], list[Push]], *, defer: bool = False) -> None:
    """Push what `build` renders, at most once per LATEST_INTERVAL for `key`; the last change always goes out.

    For state a page shows whole, where the newest rendering replaces every older one.
    `build` reads the database when it runs, so a push deferred to the end of the
    interval shows every change made meanwhile. It runs in a sync thread: here, when
    called from one (an on-commit hook) and the interval has passed, else later on
    the database thread. `defer`: always later, never in the calling request's thread
    (an answer's own request must not wait for a render that is only news).
    """
    loop = runtime.server_loop
    if loop is None:  # no server (a management command, a test): nothing to spare
        _send_all(build)
        return
    now = time.monotonic()
    with runtime.latest_lock:
        if key in runtime.latest_due:
            return  # the scheduled push will read this change too
        wait = runtime.latest_sent.get(key, -LATEST_INTERVAL) + LATEST_INTERVAL - now
        # On the loop itself, `build` (the ORM) can't run: it goes to the database thread.
        deferred = defer or wait > 0 or threading.get_ident() == runtime.server_thread
        if deferred:
            runtime.latest_due.add(key)
        else:
            runtime.latest_sent[key] = now
    if not deferred:
        _send_all(build)
        return
    try:
        # A fresh context: the caller's (a sync thread inside asgiref) would make the
        # later database_sync_to_async call refuse to run, as if it were nested.
        loop.call_soon_threadsafe(_schedule_latest, key, build, max(wait, 0.0), context=contextvars.Context())
    except RuntimeError:  # the loop is closed: the server is gone
        with runtime.latest_lock:
            runtime.latest_due.discard(key)
        logger.info("Dropped the push for %s: the server is shutting down", key)


def _send_all(build: Callable[[], list[Push]]) -> None:
    try:
        pushes = build()
    except Exception:
        logger.warning("Could not render a dashboard push", exc_info=True)
        return
    for group, message in pushes:
        send(group, message)


def _schedule_latest(key: str, build: Callable[[], list[Push]], wait: float) -> None:
    task = asyncio.get_running_loop().create_task(_send_latest_after(wait, key, build))
    runtime.push_tasks.add(task)
    task.add_done_callback(runtime.push_tasks.discard)


async def _send_latest_after(wait: float, key: str, build: Callable[[], list[Push]]) -> None:
    await asyncio.sleep(wait)
    # Unmarked before building: a change committed while this renders schedules the next push.
    with runtime.latest_lock:
        runtime.latest_due.discard(key)
        runtime.latest_sent[key] = time.monotonic()
    try:
        pushes = await database_sync_to_async(build)()
        layer = get_channel_layer()
        for group, message in pushes:
            await layer.group_send(group, message)
    except Exception:
        logger.warning("A dashboard push for %s failed", key, exc_info=True)
