"""Sessions for people: the overview, one session's page, and opening a session for an agent."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from core.htmx import HtmxHttpRequest
from lifecycle.forms import MessageForm
from lifecycle.models import AgentSession, SessionMessage
from projects import access
from tokens.models import AgentToken


@require_safe
@login_required
def overview(request: HttpRequest) -> HttpResponse:
    project = request.GET.get("project", "")
    seen = access.of_user(request.user)
    sessions = AgentSession.objects.for_overview(project, seen.project_ids)
    named = seen.visible(AgentSession.objects.exclude(project_name=""))
    projects = named.values_list("project_name", flat=True).distinct().order_by("project_name")
    return render(
        request,
        "lifecycle/sessions.html",
        {"sessions": sessions, "project": project, "projects": list(projects)},
    )


@require_safe
@login_required
def session_page(request: HttpRequest, guid: uuid.UUID) -> HttpResponse:
    session = access.visible_or_404(request, AgentSession.objects.all(), pk=guid)
    context = {
        "session": session,
        "message_form": MessageForm(),
        "may_steer": access.of_user(request.user).may_answer(session.project_id),
    }
    return render(request, "lifecycle/session.html", context)


@require_POST
@login_required
def send_message(request: HtmxHttpRequest, guid: uuid.UUID) -> HttpResponse:
    """A person's message to the session's agent: handed over at its host's next PostToolUse or Stop."""
    session = access.visible_or_404(request, AgentSession.objects.all(), pk=guid)
    access.require(request, session.project_id)
    form = MessageForm(request.POST)
    if not session.takes_messages:
        form.add_error(None, "This session's agent cannot be messaged: it is over, or its host has no hooks here.")
    if not form.is_valid():
        context = {"session": session, "message_form": form}
        return render(request, "lifecycle/session.html#message-form", context, status=422)
    SessionMessage.send(session, form.cleaned_data["text"].strip(), by=request.user.get_username())
    if not request.htmx:
        return redirect(session.get_absolute_url())
    context = {"session": session, "message_form": MessageForm(), "sent": True}
    return render(request, "lifecycle/session.html#message-form", context)


@require_http_methods(["GET", "POST"])
@login_required
def session_new(request: HttpRequest) -> HttpResponse:
    """Open a session for an agent run and show the guid and MCP configuration to give the agent."""
    seen = access.of_user(request.user)
    # The agents this person may start work for: those of the projects they answer in (every one: superusers).
    tokens = AgentToken.objects.active()
    if not seen.everything:
        tokens = tokens.filter(project__in=list(seen.answering_ids()))
    error = ""
    if request.method == "POST":
        token = tokens.filter(pk=request.POST.get("token") or 0).first()
        name, project = request.POST.get("name", "").strip(), request.POST.get("project", "").strip()
        if token is None:
            error = "Choose the token the agent will use."
        elif len(name) > 200 or len(project) > 200:
            error = "Name and project are at most 200 characters."
        else:
            session = AgentSession.open(token=token, name=name, project=project)
            return redirect(f"{session.get_absolute_url()}?new=1")
    return render(
        request,
        "lifecycle/session_new.html",
        {"tokens": tokens, "error": error, "public_url": settings.HOOKBRIDGE_PUBLIC_URL},
        status=422 if error else 200,
    )
