"""A session's grants ("Allow for this session"): listed on its page with the time left, revoked by a click."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_POST, require_safe

from approvals.models import Grant
from core.htmx import HtmxHttpRequest
from lifecycle.models import AgentSession
from projects import access


def _context(request: HtmxHttpRequest, session: AgentSession) -> dict[str, object]:
    return {
        "session": session,
        "grants": [grant for grant in session.grants.select_related("granted_by") if grant.active],
        "may_revoke": access.of_user(request.user).may_answer(session.project_id),
    }


@require_safe
@login_required
def session_grants(request: HtmxHttpRequest, guid: uuid.UUID) -> HttpResponse:
    session = access.visible_or_404(request, AgentSession.objects.all(), pk=guid)
    return render(request, "approvals/grants.html#grants", _context(request, session))


@require_POST
@login_required
def revoke(request: HtmxHttpRequest, grant_id: int) -> HttpResponse:
    """Ends a grant now: the next such tool use in its session waits for a person again."""
    grant = get_object_or_404(Grant.objects.select_related("session"), pk=grant_id)
    session = access.visible_or_404(request, AgentSession.objects.all(), pk=grant.session_id)
    access.require(request, session.project_id)
    grant.revoke(by=request.user.get_username())
    return render(request, "approvals/grants.html#grants", _context(request, session))
