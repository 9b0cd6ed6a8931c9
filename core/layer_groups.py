"""Leaving channel-layer groups, batched: what a call does last, whichever way it ended."""

from __future__ import annotations

import logging
from collections.abc import Iterable

import anyio
from channels.layers import get_channel_layer

from core import runtime

logger = logging.getLogger(__name__)


async def leave(groups: Iterable[str], channel: str) -> None:
    """Take `channel` out of `groups`, together with every other call leaving at the same moment.

    5,000 calls hung up at once left their groups one Redis command each: the pool's
    connections ran out and some waited past their limit, each a logged traceback (a group
    left behind only expires). Batched, the leavers of one moment cost one pipeline.
    Shielded, since the caller is usually being cancelled; a failure is logged, never
    raised: the call is over either way.
    """
    memberships = [(group, channel) for group in groups]
    with anyio.CancelScope(shield=True):
        try:
            await runtime.batch("group leavers", _discard).add(memberships)
        except Exception:
            logger.warning("Could not leave groups %s", ", ".join(g for g, _ in memberships), exc_info=True)


async def _discard(batch: list[list[tuple[str, str]]]) -> list[None]:
    layer = get_channel_layer()
    memberships = [membership for memberships in batch for membership in memberships]
    try:
        discard_many = getattr(layer, "group_discard_many", None)
        if discard_many is not None:
            await discard_many(memberships)
        else:
            for group, channel in memberships:
                await layer.group_discard(group, channel)
    except Exception:
        # Logged once for the batch, not once per call in it.
        logger.warning("Could not leave %d groups; they expire on their own", len(memberships), exc_info=True)
    return [None] * len(batch)
