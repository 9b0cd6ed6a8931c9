"""Access checked where it is used (issue 54): every open socket's person or token is checked again every
HOOKBRIDGE_ACCESS_CHECK_SECONDS, whatever took the access away.

A revocation through the app's own paths closes sockets at once (core.broadcast.access_revoked, on the model's
signals). A change that sends no signal does not: a bulk `update(is_active=False)`, a SQL statement, a directory
sync. So each worker, while it has sockets open, reads the standing of their owners (core.runtime.sockets_per_owner:
one query for the people, one for the tokens, however many sockets) and closes the lapsed ones' sockets with
REVOKED, on every worker, through the owner's group. Over HTTP, tokens.cache re-reads a token at least as often.
"""

from __future__ import annotations

import asyncio
import logging

from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth import get_user_model

from core import runtime
from core.broadcast import owner_group
from core.db import database_sync_to_async
from tokens.models import AgentToken

logger = logging.getLogger(__name__)

TASK = "access-standing"


def lapsed(owners: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The owners among `owners` whose access has lapsed: a person whose row says inactive, a token whose row is
    revoked, expired or its person's inactive. A row this read cannot see is left to the signals its deletion
    sends (and a test's rows, in a transaction no other connection sees, are never taken for lapsed)."""
    people = [pk for kind, pk in owners if kind == "user"]
    tokens = [pk for kind, pk in owners if kind == "token"]
    inactive = set(get_user_model().objects.filter(pk__in=people, is_active=False).values_list("pk", flat=True))
    found = AgentToken.objects.filter(pk__in=tokens)
    revoked = set(found.exclude(pk__in=found.active().values("pk")).values_list("pk", flat=True))
    return [(kind, pk) for kind, pk in owners if pk in (inactive if kind == "user" else revoked)]


async def check_once() -> list[tuple[str, int]]:
    """One round: the lapsed owners of this worker's open sockets, each told to close everywhere."""
    owners = list(runtime.sockets_per_owner)
    if not owners:
        return []
    gone: list[tuple[str, int]] = await database_sync_to_async(lapsed)(owners)
    layer = get_channel_layer()
    for kind, pk in gone:
        logger.info("Closing the sockets of %s %s: its access lapsed with no signal", kind, pk)
        await layer.group_send(owner_group(kind, pk), {"type": "access.revoked"})
    return gone


async def _watch() -> None:
    while True:
        await asyncio.sleep(float(settings.HOOKBRIDGE_ACCESS_CHECK_SECONDS or 3.0))
        try:
            await check_once()
        except Exception:
            # A database or layer fault costs this round, never the watch: the next round reads again.
            logger.warning("Could not check the standing of open sockets' owners", exc_info=True)


def ensure_watching() -> None:
    """Starts this worker's watch at its first socket (again, if the loop it ran on has gone)."""
    runtime.keep_running(TASK, _watch)
