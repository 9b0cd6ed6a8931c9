from __future__ import annotations

from django.contrib import admin

from core.admin import RecordAdmin
from lifecycle.models import AgentSession, LifecycleEvent, SessionEvent
from projects.admin import ProjectScoped


@admin.register(LifecycleEvent)
class LifecycleEventAdmin(ProjectScoped, RecordAdmin, admin.ModelAdmin[LifecycleEvent]):
    list_display = [
        "event_type",
        "phase_number",
        "phase_name",
        "step",
        "total_steps",
        "asker_name",
        "created_at",
    ]
    list_filter = [("project", admin.RelatedOnlyFieldListFilter), "event_type", "asker_name", "created_at"]
    search_fields = ["phase_name", "phase_number", "asker_name"]
    date_hierarchy = "created_at"


class SessionEventInline(RecordAdmin, admin.TabularInline[SessionEvent, AgentSession]):
    model = SessionEvent
    extra = 0
    fields = readonly_fields = ("type", "data", "created_at")


@admin.register(AgentSession)
class AgentSessionAdmin(ProjectScoped, RecordAdmin, admin.ModelAdmin[AgentSession]):
    list_display = [
        "__str__",
        "project_name",
        "project",
        "owner_name",
        "progress",
        "phase",
        "success",
        "created_at",
        "closed_at",
    ]
    list_filter = [
        "project_name",
        ("project", admin.RelatedOnlyFieldListFilter),
        "owner_name",
        "phase",
        "success",
        "created_at",
    ]
    search_fields = ["name", "project_name", "project__name", "owner_name", "status_message", "response"]
    date_hierarchy = "created_at"
    readonly_fields = (
        "guid", "token", "owner_name", "created_at", "last_activity_at", "acked_at", "progress", "status_message",
        "phase", "response", "completed_at", "success", "last_error", "error_recoverable",
    )  # fmt: skip
    inlines = [SessionEventInline]
