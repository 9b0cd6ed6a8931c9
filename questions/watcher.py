"""Keeping dashboards current when another process changes questions or hook runs, on an unshared layer.

A plain in-memory channel layer lives in one process, so a question asked (or a
hook run) through `mcp_stdio` (another process, same database) would send its push
nowhere the web server can hear. The embedded default's layer is shared between
local processes (hookbridge_site.local_layer), and with Redis every process shares
the layer: then this watcher never runs. Where the local layer cannot be shared
(no Unix datagram sockets), it compares the pending questions and the latest hook
runs in the database with what this process's dashboards last got, every wait
slice, and sends the current state when they differ.
"""

from __future__ import annotations

import asyncio
import logging

from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings

from hookbridge_site.broadcast import DASHBOARD_GROUP
from hookbridge_site.db import database_sync_to_async
from hookbridge_site.local_layer import LocalChannelLayer
from lifecycle.hook_runs import HookRun
from questions.models import Question

logger = logging.getLogger(__name__)

# Pending question ids as this process's dashboards last saw them.
known_pending: set[str] = set()
# (id, status, heartbeat) of the hook runs the dashboards list, as last rendered here.
known_runs: tuple[object, ...] = ()
_task: asyncio.Task[None] | None = None


def runs_signature(runs: list[HookRun]) -> tuple[object, ...]:
    return tuple((run.pk, run.status, run.heartbeat_at) for run in runs)


def note_pushed(question_id: object, pending: bool) -> None:
    """Called for every push this process makes, so the watcher does not repeat it."""
    if pending:
        known_pending.add(str(question_id))
    else:
        known_pending.discard(str(question_id))


@database_sync_to_async
def _pending_ids() -> set[str]:
    return {str(pk) for pk in Question.objects.pending().values_list("pk", flat=True)}


@database_sync_to_async
def _runs_now() -> tuple[object, ...]:
    return runs_signature(list(HookRun.objects.only("pk", "status", "heartbeat_at")[: HookRun.RECENT]))


async def _watch() -> None:
    from questions import consumers

    layer = get_channel_layer()
    while consumers.connected > 0:
        await asyncio.sleep(settings.HOOKBRIDGE_WAIT_SLICE)
        try:
            pending = await _pending_ids()
            if pending != known_pending or await _runs_now() != known_runs:
                known_pending.clear()
                known_pending.update(pending)
                for html in await consumers.DashboardConsumer.render_state():
                    await layer.group_send(DASHBOARD_GROUP, {"type": "dashboard.html", "html": html})
        except Exception:
            logger.warning("Dashboard watcher failed; trying again next slice", exc_info=True)


def ensure_running() -> None:
    global _task
    layer = get_channel_layer()
    if not isinstance(layer, InMemoryChannelLayer) or (isinstance(layer, LocalChannelLayer) and layer.shared):
        return
    if _task is None or _task.done():
        _task = asyncio.get_running_loop().create_task(_watch(), name="dashboard-watcher")
