"""The ASGI router: /mcp to the MCP SDK's app, /hooks/<host> (hosts.registry) to the hosts' hooks, the rest to Django.

The site shell is the top floor: the one place that imports every app, mcpapi included (docs/architecture.md).
"""

from __future__ import annotations

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hookbridge_site.settings")
django.setup(set_prefix=False)  # as django.core.asgi.get_asgi_application() does

# Imported after Django is set up: these load models.
from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from starlette.types import Receive, Scope, Send  # noqa: E402

from core import acting, broadcast, collector, runtime  # noqa: E402
from core.asgi_handler import HookBridgeASGIHandler  # noqa: E402
from core.asgi_io import headers_only_for_head  # noqa: E402
from core.compat.anyio_tasks import free_cancelled_tasks  # noqa: E402
from dashboard.routing import websocket_urlpatterns as dashboard_websockets  # noqa: E402
from hookbridge_site import tracing  # noqa: E402
from hooks.routing import websocket_urlpatterns as hook_websockets  # noqa: E402
from hosts import endpoint as host_hooks  # noqa: E402
from lifecycle.routing import websocket_urlpatterns as lifecycle_websockets  # noqa: E402
from mcpapi.http import MCPRouter  # noqa: E402
from mcpapi.server import build_http_app  # noqa: E402
from notify import audit_stream, audit_watch, dispatcher  # noqa: E402
from questions import sweeper  # noqa: E402
from tokens.websocket import BearerTokenAuth  # noqa: E402

runtime.tune_thread_switching()
free_cancelled_tasks()
django_asgi_app = HookBridgeASGIHandler()
mcp_app = MCPRouter(build_http_app)


def _origin(scope: Scope) -> acting.Origin:
    """Where the request came from, for the audit record: behind a trusted proxy, its X-Forwarded-For."""
    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope.get("headers", ())}
    ip = (scope.get("client") or ("",))[0] or ""
    if settings.HOOKBRIDGE_TRUST_PROXY_HEADERS and (forwarded := headers.get("x-forwarded-for", "").split(",")[0]):
        ip = forwarded.strip()
    traced = tracing.current_trace_id()  # the span's, which continues the caller's traceparent if it sent one
    return acting.origin_of(ip, headers.get("user-agent", ""), headers.get("traceparent", ""), trace_id=traced)


async def route_http(scope: Scope, receive: Receive, send: Send) -> None:
    acting.origin_now.set(_origin(scope))
    acting.actor_now.set(None)
    broadcast.bind_server_loop()
    sweeper.ensure_running()
    dispatcher.ensure_running()
    audit_watch.ensure_running()
    audit_stream.ensure_running()
    collector.ensure_running()
    if scope["path"] == "/mcp" or scope["path"].startswith("/mcp/"):
        await mcp_app(scope, receive, send)
    elif scope["path"].rstrip("/") in host_hooks.PATHS:
        await host_hooks.app(scope, receive, send)
    else:
        await django_asgi_app(scope, receive, send)  # type: ignore[arg-type]


http_router = tracing.wrap(collector.counting_connections(headers_only_for_head(route_http)))

websocket_urlpatterns = dashboard_websockets + lifecycle_websockets + hook_websockets

application = ProtocolTypeRouter(
    {
        "http": http_router,
        # A bearer token (programs) needs no Origin check; a session cookie (browsers) does.
        "websocket": collector.counting_connections(
            BearerTokenAuth(
                token_app=URLRouter(websocket_urlpatterns),
                cookie_app=AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
            )
        ),
    }
)
