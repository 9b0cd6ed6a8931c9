"""One hook run's page, live: its directories fill in as they finish."""

from __future__ import annotations

import uuid

from django.template.loader import render_to_string

from core.consumers import LiveConsumer
from core.db import database_sync_to_async
from hooks import live
from hooks.models import HookRun
from projects import access


class HookRunPageConsumer(LiveConsumer):
    def _run(self) -> HookRun | None:
        run_id = uuid.UUID(str(self.scope["url_route"]["kwargs"]["run_id"]))
        return HookRun.objects.prefetch_related("directories").filter(pk=run_id).first()

    @database_sync_to_async
    def group_for(self) -> str:
        run = self._run()
        # Another project's run is refused exactly like an unknown one.
        return live.run_group(run.pk) if run and access.of_user(self.scope.get("user")).sees(run.project_id) else ""

    @database_sync_to_async
    def current_state(self) -> list[str]:
        return [render_to_string("hooks/hook_run.html#run-live", {"run": self._run(), "oob": True})]
