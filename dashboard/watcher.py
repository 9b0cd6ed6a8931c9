"""Keeping dashboards current when another process changes questions or hook runs, on an unshared layer.

A plain in-memory channel layer lives in one process, so a question asked (or a
hook run) through `mcp_stdio` (another process, same database) would send its push
nowhere the web server can hear. The embedded default's layer is shared between
local processes (core.local_layer), and with Redis every process shares
the layer: then this watcher never runs. Where the local layer cannot be shared
(no Unix datagram sockets), it compares the pending questions and the latest hook
runs in the database with what this process's dashboards last got
(dashboards.dashboard_pending_seen, dashboards.dashboard_runs_seen), every wait slice,
and sends the current state when they differ.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.dispatch import receiver

from core import runtime
from core.broadcast import DASHBOARD_GROUP, PARTIAL_GROUP
from core.db import database_sync_to_async
from core.local_layer import LocalChannelLayer
from dashboard import runtime as dashboards
from dashboard import state
from hooks.models import HookRun
from questions import signals as question_signals
from questions.models import Question

logger = logging.getLogger(__name__)

TASK = "dashboard-watcher"


@receiver(question_signals.question_asked)
def _asked(sender: Any, question_id: uuid.UUID, **kwargs: Any) -> None:
    # Every push this process makes is noted, so the watcher does not repeat it.
    dashboards.dashboard_pending_seen.add(str(question_id))


@receiver(question_signals.question_resolved)
def _resolved(sender: Any, question_id: uuid.UUID, **kwargs: Any) -> None:
    dashboards.dashboard_pending_seen.discard(str(question_id))


@database_sync_to_async
def _pending_ids() -> set[str]:
    return {str(pk) for pk in Question.objects.pending().values_list("pk", flat=True)}


@database_sync_to_async
def _runs_now() -> tuple[object, ...]:
    return state.runs_signature(list(HookRun.objects.only("pk", "status", "heartbeat_at")[: HookRun.RECENT]))


async def _watch() -> None:
    layer = get_channel_layer()
    while dashboards.open_dashboards > 0:
        await asyncio.sleep(settings.HOOKBRIDGE_WAIT_SLICE)
        try:
            pending = await _pending_ids()
            if pending != dashboards.dashboard_pending_seen or await _runs_now() != dashboards.dashboard_runs_seen:
                for html in await database_sync_to_async(state.live_state)():
                    await layer.group_send(DASHBOARD_GROUP, {"type": "dashboard.html", "html": html})
                # Dashboards that see some projects read their own state again.
                await layer.group_send(PARTIAL_GROUP, {"type": "state.resync"})
        except Exception:
            logger.warning("Dashboard watcher failed; trying again next slice", exc_info=True)


def ensure_running() -> None:
    layer = get_channel_layer()
    if not isinstance(layer, InMemoryChannelLayer) or (isinstance(layer, LocalChannelLayer) and layer.shared):
        return
    runtime.keep_running(TASK, _watch)
