"""This process's notify state: its senders' wake-ups (notify.dispatcher)."""

from __future__ import annotations

import asyncio

# One per channel's sender, set when a step may have become due here (a question asked or ended in this
# process): the sender looks at once instead of at its next poll. Other processes' steps are found by the poll.
wakeups: dict[str, asyncio.Event] = {}
