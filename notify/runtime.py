"""This process's notify state: its dispatcher's wake-up (notify.dispatcher)."""

from __future__ import annotations

import asyncio

# Set when a step may have become due here (a question asked or ended in this process): the dispatcher
# looks at once instead of at its next poll. Other processes' steps are found by the poll.
wakeup: asyncio.Event | None = None

# When this process last gave back steps left claimed by a worker that went away (notify.dispatcher).
stale_checked_at = float("-inf")
