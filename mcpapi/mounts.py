"""One SDK app per combination of tool sets, each with its session manager kept running in a task of its own.

Daphne does not speak the ASGI lifespan protocol, so the SDK's session manager never gets
its `run()` context from Starlette. Each mount holds that context open in one long-lived
task, started by its first request; `install_shutdown_trigger` stops them all from a Twisted
"before shutdown" trigger (without the stop, SIGTERM waits forever on them).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any, cast

from starlette.types import Receive, Scope, Send

logger = logging.getLogger(__name__)

ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class MCPMount:
    """One SDK app, with its session manager kept running in a task of its own."""

    def __init__(self, build: Callable[[], tuple[ASGIApp, Any]]) -> None:
        self._build = build
        self._app: ASGIApp | None = None
        self._session_manager: Any = None
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None

    async def _ensure_running(self) -> ASGIApp:
        if self._ready is None:
            # First request: everything up to create_task runs without an
            # await, so concurrent first requests cannot start two runners.
            self._ready, self._stop = asyncio.Event(), asyncio.Event()
            self._app, self._session_manager = self._build()
            self._runner = asyncio.get_running_loop().create_task(self._run(), name="mcp-session-manager")
        await self._ready.wait()
        assert self._app is not None
        return self._app

    async def _run(self) -> None:
        assert self._ready is not None
        assert self._stop is not None
        try:
            async with self._session_manager.run():
                self._ready.set()
                await self._stop.wait()
        except Exception:
            logger.exception("The MCP session manager stopped with an error")
            raise
        finally:
            self._ready.set()
            logger.info("MCP session manager stopped")

    async def shutdown(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._runner is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._runner), timeout=5)
            except (TimeoutError, asyncio.CancelledError):
                self._runner.cancel()
            except Exception:
                logger.debug("runner ended with an error during shutdown", exc_info=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = await self._ensure_running()
        await app(scope, receive, send)


def install_shutdown_trigger(start_shutdown: Callable[[], asyncio.Future[None]]) -> bool:
    """Run `start_shutdown` before daphne's reactor shuts down; False outside daphne (nothing installed)."""
    # Only under daphne: importing the reactor anywhere else would install one.
    if "twisted.internet.reactor" not in sys.modules:
        return False
    from twisted.internet import defer
    from twisted.internet import reactor as _reactor

    reactor = cast(Any, _reactor)

    def before_shutdown() -> defer.Deferred[None]:
        return defer.Deferred.fromFuture(start_shutdown())

    reactor.addSystemEventTrigger("before", "shutdown", before_shutdown)
    return True
