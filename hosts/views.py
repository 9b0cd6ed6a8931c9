"""“Allow and make a rule” on the dashboard (issue 42): propose, show what it decides, save and allow."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from approvals.rule_proposal import RuleProposal, may_make_rules, proposed_patterns
from core.htmx import HtmxHttpRequest
from projects import access
from questions.kinds import Kind
from questions.models import Question
from tokens.auth import client_address


@require_http_methods(["GET", "POST"])
@login_required
def propose_rule(request: HtmxHttpRequest, question_id: uuid.UUID) -> HttpResponse:
    """GET: the proposal for this approval and what it would decide. POST with `check`: the same for edited patterns;
    POST without: save the rule and allow this approval and every waiting one it decides."""
    question = access.visible_or_404(request, Question.objects.filter(kind=Kind.APPROVAL), pk=question_id)
    seen = access.of_user(request.user)
    context: dict[str, object] = {"question": question}
    if not may_make_rules(seen, question):
        context["refused"] = (
            f"Only an admin of {question.project} makes its rules."
            if question.project_id
            else "Only a superuser makes rules for agents in no project."
        )
        return render(request, "hosts/rule.html#proposal", context, status=403)
    if request.method == "GET":
        form = RuleProposal(proposed_patterns(question), question=question, seen=seen)
    else:
        form = RuleProposal(request.POST, question=question, seen=seen)
    context["form"] = form
    if not form.is_valid():
        return render(request, "hosts/rule.html#proposal", context, status=200 if request.method == "GET" else 422)
    if request.method == "GET" or "check" in request.POST:
        context["decides"] = form.decides()
        return render(request, "hosts/rule.html#proposal", context)
    rule, allowed = form.save_and_allow(request.user, client_address(request))
    return render(request, "hosts/rule.html#saved", {"rule": rule, "allowed": allowed})
