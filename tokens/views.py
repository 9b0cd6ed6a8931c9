"""A person on the dashboard connects an agent: a token of their own, shown once with the line to paste."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from projects import access
from tokens.models import AgentToken


def mcp_url(request: HttpRequest) -> str:
    """This server's MCP endpoint, as the person's browser reaches it."""
    return request.build_absolute_uri("/mcp")


@require_POST
@login_required
def create_for_me(request: HttpRequest) -> HttpResponse:
    allowed = access.projects_with(request.user, settings.HOOKBRIDGE_TOKEN_ROLE)
    chosen = request.POST.get("project", "")
    if chosen:
        project = allowed.filter(pk=int(chosen)).first() if chosen.isdigit() else None
    else:
        # The dashboard's first-run button names none: the default project, where the person may.
        project = allowed.filter(is_default=True).first() or allowed.first()
    if project is None:
        raise PermissionDenied(
            f"Making an agent token needs the {settings.HOOKBRIDGE_TOKEN_ROLE} role in that project; "
            "a project's admin can give it to you."
        )
    # An agent-scope token, named after the person: it can ask questions and report progress, nothing more.
    token, raw = AgentToken.issue(f"{request.user.get_username()}'s agent"[:100], user=request.user, project=project)
    context = {"token": token, "raw": raw, "mcp_url": mcp_url(request)}
    return render(request, "tokens/connect.html#token-created", context)


@login_required
def connected(request: HttpRequest) -> HttpResponse:
    """The person's agents: tokens they made here and clients they signed in, each with a Disconnect button."""
    shown = disconnectable(request.user).select_related("oauth_client", "project")
    admin = request.user.is_superuser
    # Tokens made on the command line (create_token) act as nobody: an admin sees and disconnects them here,
    # or the page said "None yet" while they asked (issue 39). Others are told how many there are.
    context = {
        "agents": shown.filter(user=request.user),  # type: ignore[misc]  # login_required: a User
        "unowned": shown.filter(user__isnull=True) if admin else None,
        "unowned_count": 0 if admin else AgentToken.objects.active().filter(user__isnull=True).count(),
        "mcp_url": mcp_url(request),
    }
    return render(request, "tokens/connected.html", context)


def disconnectable(user: Any) -> QuerySet[AgentToken]:
    """The live agents a person may disconnect: their own, and for an admin the command line's too."""
    owner = models.Q(user__pk=user.pk)
    if user.is_superuser:
        owner |= models.Q(user__isnull=True)
    return AgentToken.objects.active().filter(owner)


@require_POST
@login_required
def disconnect(request: HttpRequest, pk: int) -> HttpResponse:
    # Another person's token is a 404, as if it did not exist.
    agent = get_object_or_404(disconnectable(request.user), pk=pk)
    agent.disconnect()
    messages.success(request, f"{agent.name} is disconnected: its next call is refused.")
    return redirect("tokens:connected")
