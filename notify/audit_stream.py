"""The audit record streamed to a SIEM as it is written (HOOKBRIDGE_AUDIT_STREAM_URL): batches of entries, each
with its seq, prev and hash, posted and signed as the webhook's posts are (HOOKBRIDGE_AUDIT_STREAM_SECRET).

At least once: the cursor moves only after the receiver answered 2xx, and a worker that died mid-post leaves it
where it was, so the next post repeats the batch; the receiver drops repeats by seq. Every server process runs
the stream; the cursor's conditional update keeps them from moving it backwards.
"""

from __future__ import annotations

import asyncio
import logging

from django.conf import settings
from django.db.models.functions import Coalesce, Now

from audit import chain, signing
from audit.models import Entry
from core import runtime
from core.db import database_sync_to_async
from notify import webhook
from notify.models import AuditStreamCursor
from notify.sending import Failed

logger = logging.getLogger(__name__)

TASK = "audit-stream"
BATCH = 100
# After a failed post, the wait before the next try doubles up to this.
MOST_BACKOFF = 60.0


def configured() -> bool:
    return bool(settings.HOOKBRIDGE_AUDIT_STREAM_URL)


def send_due() -> int:
    """Post the next batch of entries past the cursor; how many were sent (0: none due). Failed if not taken."""
    cursor, _ = AuditStreamCursor.objects.get_or_create(pk=1)
    batch = list(Entry.objects.filter(seq__gt=cursor.sent_through).order_by("seq")[:BATCH])
    if not batch:
        return 0
    public = signing.public_key_text()
    payload = {
        "type": "hookbridge-audit-entries",
        "key_id": signing.key_id(public),
        "entries": [chain.as_dict(entry) for entry in batch],
    }
    try:
        webhook.post(settings.HOOKBRIDGE_AUDIT_STREAM_URL, payload, settings.HOOKBRIDGE_AUDIT_STREAM_SECRET)
    except Failed as failed:
        AuditStreamCursor.objects.filter(pk=1).update(
            last_error=str(failed)[:300], failing_since=Coalesce("failing_since", Now())
        )
        raise
    last = batch[-1].seq
    AuditStreamCursor.objects.filter(pk=1, sent_through__lt=last).update(
        sent_through=last, last_error="", failing_since=None
    )
    return len(batch)


async def _stream_forever() -> None:
    backoff = 1.0
    while True:
        try:
            sent = await database_sync_to_async(send_due)()
        except Failed as failed:
            logger.warning("Could not stream the audit record (%s); trying again in %.0f s", failed, backoff)
            await asyncio.sleep(backoff)
            backoff = min(MOST_BACKOFF, backoff * 2)
            continue
        except Exception:
            logger.warning("Could not stream the audit record; trying again later", exc_info=True)
            await asyncio.sleep(MOST_BACKOFF)
            continue
        backoff = 1.0
        # A full batch: more are waiting, send on at once; else look again in a second.
        await asyncio.sleep(0 if sent == BATCH else 1.0)


def ensure_running() -> None:
    """Start this process's stream on the running loop (once; again if that loop has gone), when it is set up."""
    if configured():
        runtime.keep_running(TASK, _stream_forever)
