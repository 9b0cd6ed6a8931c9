"""Django's ASGI handler, with a short path for views that do all their database work on the database thread.

For every request Django's handler starts a thread of its own (a ThreadSensitiveContext)
just to run the `request_started` and `request_finished` receivers in it, which close that
thread's database connections, then joins it; and it watches for a disconnect in a second
task. A token-API view (tokens.auth.token_required) never opens a connection there: its
body runs in one hop on the shared database thread, whose connection core.db
looks after. For those views the thread, the two hops and the joins were most of the
request (bench: a bare answer POST that 404s), so they are served without them. Every other
request, pages and forms included, goes through Django's handler unchanged.
"""

from __future__ import annotations

from typing import Any

from django.core.handlers.asgi import ASGIHandler
from django.urls import Resolver404, get_resolver
from django.urls.exceptions import NoReverseMatch

from core.compat import django_asgi

# Set by tokens.auth.token_required on the views it makes: their body runs on the database thread.
ON_THE_DATABASE_THREAD = "hookbridge_on_the_database_thread"


def on_the_database_thread_alone(path: str) -> bool:
    """Whether the view at `path` does all its database work on the database thread."""
    try:
        match = get_resolver().resolve(path)
    except (Resolver404, NoReverseMatch):
        return False
    return bool(getattr(match.func, ON_THE_DATABASE_THREAD, False))


class HookBridgeASGIHandler(ASGIHandler):
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and on_the_database_thread_alone(scope["path"]):
            await self.handle_on_the_loop(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    async def handle_on_the_loop(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Django's handle() without a thread of the request's own: the view hops to the database thread itself."""
        await django_asgi.handle_on_the_loop(self, scope, receive, send)
