"""This process's notify state: its senders' wake-ups (notify.dispatcher), its VAPID key (notify.push), and Teams'
token and the Bot Framework's signing keys (notify.teams)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from joserfc.jwk import KeySet

if TYPE_CHECKING:
    from py_vapid import Vapid02

# One per channel's sender, set when a step may have become due here (a question asked or ended in this
# process): the sender looks at once instead of at its next poll. Other processes' steps are found by the poll.
wakeups: dict[str, asyncio.Event] = {}

# The key every push is signed with, read (or generated) at the first push or subscription in this process.
vapid: Vapid02 | None = None

# The bot's access token for the Bot Connector service and when it expires (a Unix time).
teams_token: tuple[str, float] | None = None
# The Bot Framework's signing keys (from its OpenID metadata) and until when they are used without a fetch.
teams_keys: tuple[KeySet, float] | None = None
