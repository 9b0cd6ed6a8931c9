"""Withdrawing the questions nobody waits for any more, from every server process.

A question whose agent stopped waiting stays answerable for the re-attach window;
after it, or past the question's own timeout with no call left to time it out,
it ends here. Every process sweeps: the updates are conditional, so two workers
sweeping at once end each question once.
"""

from __future__ import annotations

import asyncio
import logging

from django.conf import settings

from core import runtime
from core.db import database_sync_to_async
from questions.models import Question

logger = logging.getLogger(__name__)

TASK = "question-sweeper"


def interval() -> float:
    """Often enough that a question leaves within a quarter of the window (at most a minute) of its end."""
    return min(60.0, max(0.5, settings.HOOKBRIDGE_REATTACH_WINDOW / 4))


async def _sweep_forever() -> None:
    while True:
        await asyncio.sleep(interval())
        try:
            ended = await database_sync_to_async(Question.expire_abandoned)()
        except Exception:
            logger.warning("Could not withdraw abandoned questions; trying again later", exc_info=True)
            continue
        if ended:
            logger.info("Withdrew %d questions nobody waits for any more", ended)


def ensure_running() -> None:
    """Start this process's sweep on the running loop (once; again if that loop has gone)."""
    runtime.keep_running(TASK, _sweep_forever)
