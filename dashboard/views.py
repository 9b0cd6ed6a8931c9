"""The team's dashboard: pending questions, the latest lifecycle event, recent hook runs; metrics for Prometheus."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST

from dashboard import metrics as metric_figures
from dashboard import state
from hooks.config import discovered
from projects import access
from questions import replies
from tokens.auth import bearer_token
from tokens.views import mcp_url


@require_safe
@login_required
def index(request: HttpRequest) -> HttpResponse:
    seen = access.of_user(request.user)
    context = state.context(seen)
    choices = state.filter_choices(seen)
    extra = {
        "mcp_url": mcp_url(request),
        "hooks_configured": bool(discovered().hooks),
        "replies": replies.for_person(request.user),
        "may_connect": access.projects_with(request.user, settings.HOOKBRIDGE_TOKEN_ROLE).exists(),
        "token_role": settings.HOOKBRIDGE_TOKEN_ROLE,
    }
    return render(request, "dashboard/dashboard.html", {**context, **choices, **extra})


@require_safe
@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus's text format, for the bearer of HOOKBRIDGE_METRICS_TOKEN; no such page when it is unset."""
    expected = settings.HOOKBRIDGE_METRICS_TOKEN
    if not expected:
        raise Http404("Metrics are off: set HOOKBRIDGE_METRICS_TOKEN to turn them on")
    if not hmac.compare_digest(bearer_token(request).encode(), expected.encode()):
        refused = HttpResponse(
            "Authorization: send HOOKBRIDGE_METRICS_TOKEN as a bearer token\n", status=401, content_type="text/plain"
        )
        refused["WWW-Authenticate"] = 'Bearer realm="hookbridge-metrics"'
        return refused
    return HttpResponse(metric_figures.exposition(), content_type=CONTENT_TYPE_LATEST)


@require_safe
def manifest(request: HttpRequest) -> HttpResponse:
    """The web app manifest: the dashboard installs as an app on a phone or a desktop (issue 42)."""
    icons = [
        {"src": static("icon.svg"), "sizes": "any", "type": "image/svg+xml"},
        {"src": static("icon-192.png"), "sizes": "192x192", "type": "image/png"},
        {"src": static("icon-512.png"), "sizes": "512x512", "type": "image/png"},
        {"src": static("icon-512-maskable.png"), "sizes": "512x512", "type": "image/png", "purpose": "maskable"},
    ]
    body = {
        "name": "Hook Bridge",
        "short_name": "Hook Bridge",
        "description": "Answer your team's AI agents: their questions and approvals, live.",
        "id": reverse("dashboard:index"),
        "start_url": reverse("dashboard:index"),
        "scope": "/",
        "display": "standalone",
        "background_color": "#f6f7f9",
        "theme_color": "#2457d6",
        "icons": icons,
    }
    return HttpResponse(json.dumps(body, indent=2), content_type="application/manifest+json")


@require_safe
def service_worker(request: HttpRequest) -> HttpResponse:
    """The service worker, from the site's root so that it may serve every page (a script's scope is its folder)."""
    response = HttpResponse(_worker_script(), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    return response


@functools.cache
def _worker_script() -> str:
    """Rendered once per process: browsers ask for the worker again on every page they open, and it only changes
    with a deploy. A new offline page is a new cache name: browsers compare the worker byte for byte to update it."""
    offline_page = render_to_string("dashboard/offline.html", request=None)
    version = hashlib.sha256(offline_page.encode()).hexdigest()[:12]
    return render_to_string("dashboard/sw.js", {"version": version})


@require_safe
def offline(request: HttpRequest) -> HttpResponse:
    """What the service worker shows for a page opened with no connection; the same for everyone, so cacheable."""
    return render(request, "dashboard/offline.html")
