"""daphne (with autobahn under it), where a push meets a socket that has just closed.

- `SOCKET_CLOSED`: a push on its way while the page goes away reaches daphne's protocol after the
  close; autobahn's `sendMessage` then raises `Disconnected`, which channels passes up through the
  consumer's send and daphne logs as an unhandled traceback. Nothing is left to tell that page.
"""

from __future__ import annotations

from autobahn.exception import Disconnected

SOCKET_CLOSED: tuple[type[BaseException], ...] = (Disconnected,)
