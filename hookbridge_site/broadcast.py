"""Pushing HTML to every open dashboard through the channel layer.

Pushes are hints (the database row is the truth), so sending one never blocks
the code that sends it. Inside the server, on-commit hooks run in worker threads;
they hand the send to the server's event loop and go on. Waiting for it instead
(async_to_sync) would park the thread until the loop ran it, and a loop that has
stopped for shutdown never does: the interpreter then hangs joining that thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

DASHBOARD_GROUP = "dashboard"

_server_loop: asyncio.AbstractEventLoop | None = None
_server_thread: int | None = None
_in_flight: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to tasks


def bind_server_loop() -> None:
    """Remember the event loop the server runs on; called from the ASGI entry point."""
    global _server_loop, _server_thread
    _server_loop, _server_thread = asyncio.get_running_loop(), threading.get_ident()


def _log_failure(future: Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.warning("A dashboard push failed", exc_info=future.exception())


def send(group: str, message: dict[str, Any]) -> None:
    """Send from sync code (on-commit hooks); a failure is logged, never raised."""
    layer = get_channel_layer()
    loop = _server_loop
    if loop is None:
        # No server loop (a management command, a test): nothing to hang on, so just wait.
        try:
            async_to_sync(layer.group_send)(group, message)
        except Exception:
            logger.warning("Could not send %s to group %s", message.get("type"), group, exc_info=True)
        return
    if threading.get_ident() == _server_thread:
        task = loop.create_task(layer.group_send(group, message))
        _in_flight.add(task)
        task.add_done_callback(_in_flight.discard)
        return
    try:
        future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
    except RuntimeError:  # the loop is closed: the server is gone
        logger.info("Dropped %s for group %s: the server is shutting down", message.get("type"), group)
        return
    future.add_done_callback(_log_failure)


def to_dashboards(html: str) -> None:
    send(DASHBOARD_GROUP, {"type": "dashboard.html", "html": html})
