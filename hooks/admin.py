from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from core.admin import RecordAdmin
from core.formatting import duration
from hooks.models import HookRun, HookRunDirectory
from projects.admin import ProjectScoped


class HookRunDirectoryInline(RecordAdmin, admin.StackedInline[HookRunDirectory, HookRun]):
    model = HookRunDirectory
    extra = 0
    fields = readonly_fields = (
        "directory", "status", "exit_code", "started_at", "duration_seconds", "output_bytes", "output_cut", "output",
    )  # fmt: skip


@admin.register(HookRun)
class HookRunAdmin(ProjectScoped, RecordAdmin, admin.ModelAdmin[HookRun]):
    """Runs are a record of what agents ran: readable, never edited."""

    list_display = [
        "tool",
        "project",
        "target",
        "status",
        "caller_name",
        "started_at",
        "duration_display",
        "failed_dirs",
    ]
    list_filter = [
        ("project", admin.RelatedOnlyFieldListFilter),
        "status",
        "tool",
        "plugin",
        "caller_name",
        "started_at",
    ]
    search_fields = ["tool", "target", "caller_name", "command", "directories__output"]
    date_hierarchy = "started_at"
    inlines = [HookRunDirectoryInline]
    readonly_fields = (
        "id", "tool", "plugin", "hook", "title", "command", "target", "fail_fast", "verbose", "timeout_seconds",
        "caller", "caller_name", "status", "started_at", "heartbeat_at", "finished_at",
    )  # fmt: skip

    def get_queryset(self, request: HttpRequest) -> QuerySet[HookRun]:
        return super().get_queryset(request).prefetch_related("directories")

    @admin.display(description="Duration")
    def duration_display(self, run: HookRun) -> str:
        return duration(run.duration, tenths=True) if run.duration is not None else "-"

    @admin.display(description="Failed directories")
    def failed_dirs(self, run: HookRun) -> str:
        return f"{run.failed_count} of {len(run.directories.all())}"
