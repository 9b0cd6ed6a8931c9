"""One hook run's page: where it ran, what each folder said."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from hooks.models import HookRun


@require_GET
@login_required
def hook_run(request: HttpRequest, run_id: uuid.UUID) -> HttpResponse:
    run = get_object_or_404(HookRun.objects.prefetch_related("directories"), pk=run_id)
    return render(request, "hooks/hook_run.html", {"run": run})
