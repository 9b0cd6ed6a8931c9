from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from lifecycle.models import LifecycleEvent


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
