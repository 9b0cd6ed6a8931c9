"""Hook runs: the list with its filters, and one run's page (where it ran, what each folder said)."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from core.htmx import HtmxHttpRequest
from hooks.config import discovered
from hooks.forms import RunFilter
from hooks.models import HookRun
from projects import access

RUNS_PER_PAGE = 50


@require_safe
@login_required
def hook_runs(request: HtmxHttpRequest) -> HttpResponse:
    """Every run, newest first, filtered by hook, status and agent."""
    filters = RunFilter(request.GET, within=access.of_user(request.user).visible(HookRun.objects.all()))
    page = Paginator(filters.runs(), RUNS_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "filters": filters,
        "query": query.urlencode(),
        "hooks_configured": bool(discovered().hooks),
    }
    template = "hooks/hook_runs.html#runs-table" if request.htmx else "hooks/hook_runs.html"
    return render(request, template, context)


@require_safe
@login_required
def hook_run(request: HttpRequest, run_id: uuid.UUID) -> HttpResponse:
    run = access.visible_or_404(request, HookRun.objects.prefetch_related("directories"), pk=run_id)
    return render(request, "hooks/hook_run.html", {"run": run})
