"""What the dashboards and a run's own page are told when a hook run changes.

The receivers below are connected to hooks.signals in HooksConfig.ready().
"""

from __future__ import annotations

import uuid
from typing import Any

from django.dispatch import receiver
from django.template.loader import render_to_string

from core import broadcast
from hooks import signals
from hooks.models import HookRun


def run_group(run_id: uuid.UUID) -> str:
    return f"hook-run.{run_id.hex}"


@receiver(signals.run_started)
def run_started(sender: Any, run_id: uuid.UUID, **kwargs: Any) -> None:
    run = HookRun.objects.prefetch_related("directories").get(pk=run_id)
    html = render_to_string("hooks/hook_runs.html#hook-run-added", {"run": run})
    broadcast.to_dashboards(html, project=run.project_id)


@receiver(signals.run_changed)
def run_changed(sender: Any, run_id: uuid.UUID, **kwargs: Any) -> None:
    run = HookRun.objects.prefetch_related("directories").get(pk=run_id)
    html = render_to_string("hooks/hook_runs.html#hook-run", {"run": run, "oob": True})
    broadcast.to_dashboards(html, project=run.project_id)
    page = render_to_string("hooks/hook_run.html#run-live", {"run": run, "oob": True})
    broadcast.send(run_group(run_id), {"type": "dashboard.html", "html": page})
