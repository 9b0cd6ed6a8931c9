"""What every channel's send shares: how it fails."""

from __future__ import annotations


class Failed(Exception):
    """A send that did not go through: `permanent` when no retry can mend it (a bad token, no such channel),
    `gone` when the address itself is no more (a push subscription its service forgot)."""

    def __init__(self, reason: str, *, permanent: bool, gone: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.permanent, self.gone = reason, permanent, gone
