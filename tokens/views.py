"""A person on the dashboard connects an agent: a token of their own, shown once with the line to paste."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from tokens.models import AgentToken


def mcp_url(request: HttpRequest) -> str:
    """This server's MCP endpoint, as the person's browser reaches it."""
    return request.build_absolute_uri("/mcp")


@require_POST
@login_required
def create_for_me(request: HttpRequest) -> HttpResponse:
    # An agent-scope token, named after the person: it can ask questions and report progress, nothing more.
    token, raw = AgentToken.issue(f"{request.user.get_username()}'s agent"[:100])
    context = {"token": token, "raw": raw, "mcp_url": mcp_url(request)}
    return render(request, "tokens/connect.html#token-created", context)
