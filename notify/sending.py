"""What every channel's send shares: how it fails, and where a chat message went."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Posted:
    """Where a chat platform put a message: its channel, chat or conversation (`where`), and the message's own id
    there (Slack's ts, Telegram's message_id, Discord's snowflake). What an update and a button press name."""

    where: str
    message_id: str


class Failed(Exception):
    """A send that did not go through: `permanent` when no retry can mend it (a bad token, no such channel),
    `gone` when the address itself is no more (a push subscription its service forgot)."""

    def __init__(self, reason: str, *, permanent: bool, gone: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.permanent, self.gone = reason, permanent, gone
