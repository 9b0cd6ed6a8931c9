from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from lifecycle.models import AgentSession, HookRun, HookRunDirectory, LifecycleEvent, SessionEvent


@admin.register(LifecycleEvent)
class LifecycleEventAdmin(admin.ModelAdmin):
    list_display = [
        "event_type",
        "phase_number",
        "phase_name",
        "step",
        "total_steps",
        "asker_name",
        "created_at",
    ]
    list_filter = ["event_type", "asker_name", "created_at"]
    search_fields = ["phase_name", "phase_number", "asker_name"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class SessionEventInline(admin.TabularInline):
    model = SessionEvent
    extra = 0
    can_delete = False
    fields = readonly_fields = ("type", "data", "created_at")

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(AgentSession)
class AgentSessionAdmin(admin.ModelAdmin):
    list_display = ["__str__", "project", "owner_name", "progress", "phase", "success", "created_at", "closed_at"]
    list_filter = ["project", "owner_name", "phase", "success", "created_at"]
    search_fields = ["name", "project", "owner_name", "status_message", "response"]
    date_hierarchy = "created_at"
    readonly_fields = (
        "guid", "token", "owner_name", "created_at", "last_activity_at", "acked_at", "progress", "status_message",
        "phase", "response", "completed_at", "success", "last_error", "error_recoverable",
    )  # fmt: skip
    inlines = [SessionEventInline]


class HookRunDirectoryInline(admin.StackedInline):
    model = HookRunDirectory
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "directory", "status", "exit_code", "started_at", "duration_seconds", "output_bytes", "output_cut", "output",
    )  # fmt: skip

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(HookRun)
class HookRunAdmin(admin.ModelAdmin):
    """Runs are a record of what agents ran: readable, never edited."""

    list_display = ["tool", "target", "status", "caller_name", "started_at", "duration_display", "failed_dirs"]
    list_filter = ["status", "tool", "plugin", "caller_name", "started_at"]
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
        return f"{run.duration:.1f} s" if run.duration is not None else "-"

    @admin.display(description="Failed directories")
    def failed_dirs(self, run: HookRun) -> str:
        return f"{run.failed_count} of {len(run.directories.all())}"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
