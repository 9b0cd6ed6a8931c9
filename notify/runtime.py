"""This process's notify state: its senders' wake-ups (notify.dispatcher) and its VAPID key (notify.push)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from py_vapid import Vapid02

# One per channel's sender, set when a step may have become due here (a question asked or ended in this
# process): the sender looks at once instead of at its next poll. Other processes' steps are found by the poll.
wakeups: dict[str, asyncio.Event] = {}

# The key every push is signed with, read (or generated) at the first push or subscription in this process.
vapid: Vapid02 | None = None
