"""The team's dashboard: pending questions, the latest lifecycle event, recent hook runs; metrics for Prometheus."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST

from dashboard import metrics as metric_figures
from dashboard import state
from hooks.config import discovered
from projects import access
from questions import replies
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
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected.encode()):
        refused = HttpResponse(
            "Authorization: send HOOKBRIDGE_METRICS_TOKEN as a bearer token\n", status=401, content_type="text/plain"
        )
        refused["WWW-Authenticate"] = 'Bearer realm="hookbridge-metrics"'
        return refused
    return HttpResponse(metric_figures.exposition(), content_type=CONTENT_TYPE_LATEST)
