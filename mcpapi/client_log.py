"""Log messages to the MCP client (notifications/message), at the level the client chose.

The server declares the logging capability by serving logging/setLevel. Over stateless HTTP
there is no session to keep the level in, so it is kept per client connection (its
Mcp-Session-Id, see mcpapi.calls) in Django's cache: Redis in team mode, shared by the workers.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache import cache
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp_types import EmptyResult, LoggingLevel, SetLevelRequestParams

from mcpapi import calls

logger = logging.getLogger(__name__)

LOG_LEVELS: tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
KEPT_SECONDS = 7 * 24 * 3600


def _key() -> str:
    """The client connection in hand: (token, the connection's Mcp-Session-Id), or this stdio process."""
    access = get_access_token()
    return f"hookbridge.mcp-log-level:{access.client_id if access else 'local'}:{calls.connection.get()}"


async def set_level(ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams) -> EmptyResult:
    """logging/setLevel of the handshake era: kept for the connection, whichever worker serves it next."""
    await cache.aset(_key(), params.level, timeout=KEPT_SECONDS)
    return EmptyResult()


class ClientLog:
    """One call's notifications/message, sent only at or above the level the client set (all, until it sets one).

    The level is read once, at the call's first message: a hook's live output is up to 200 lines.
    On a 2026-07-28 connection the SDK sends only what the request itself opted in to with its logLevel.
    """

    def __init__(self, ctx: Context, *, logger_name: str) -> None:
        self._ctx = ctx
        self._logger_name = logger_name
        self._wanted: str | None = None
        self._read = False

    async def __call__(self, level: LoggingLevel, text: str) -> None:
        if not self._read:
            self._read = True
            try:
                self._wanted = await cache.aget(_key())
            except Exception:  # Redis restarting: the level is a preference, the message still goes
                logger.warning("Could not read the client's log level", exc_info=True)
        if self._wanted in LOG_LEVELS and LOG_LEVELS.index(level) < LOG_LEVELS.index(self._wanted):
            return
        await self._ctx.log(level, text, logger_name=self._logger_name)
