"""The team's dashboard: pending questions, the latest lifecycle event, recent hook runs."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

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
