"""The audit record in the admin: read only, for everyone who may see it; nobody adds, changes or deletes."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html

from audit import signing
from audit.models import Checkpoint, Entry, Verification


class ReadOnly(admin.ModelAdmin[Any]):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        return {}  # not even "delete selected"


def record_facts() -> dict[str, Any]:
    """What the record's pages say above the list: the last verify, and the key an outsider checks with."""
    public = signing.public_key_text()
    return {
        "last_verification": Verification.objects.order_by("-pk").first(),
        "public_key": public,
        "key_id": signing.key_id(public),
    }


class ProjectFilter(admin.SimpleListFilter):
    """By the project's name as the entry keeps it (entries outlive projects); entries of no project named so."""

    title = "project"
    parameter_name = "project"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        names = Entry.objects.order_by("project").values_list("project", flat=True).distinct()
        return [(name or "-", name or "No project (sign-ins, people, the server)") for name in names]

    def queryset(self, request: HttpRequest, queryset: Any) -> Any:
        chosen = self.value()
        if chosen is None:
            return queryset
        return queryset.filter(project="" if chosen == "-" else chosen)


@admin.register(Entry)
class EntryAdmin(ReadOnly):
    list_display = ("seq", "at", "actor", "action", "project", "target")
    list_filter = ("action", "actor_kind", ProjectFilter, ("at", admin.DateFieldListFilter))
    search_fields = ("actor", "target", "target_id", "request_id", "trace_id")
    date_hierarchy = "at"
    list_per_page = 100
    fields = (
        "seq", "at", "actor_kind", "actor", "actor_id", "action", "project", "project_id", "target", "target_id",
        "shown_details", "ip", "user_agent", "request_id", "trace_id", "prev", "hash",
    )  # fmt: skip
    readonly_fields = fields
    change_list_template = "admin/audit/entry/change_list.html"

    @admin.display(description="Details")
    def shown_details(self, entry: Entry) -> str:
        return format_html("<pre>{}</pre>", json.dumps(entry.details, indent=2, ensure_ascii=False))

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        return super().changelist_view(request, {**record_facts(), **(extra_context or {})})


@admin.register(Checkpoint)
class CheckpointAdmin(ReadOnly):
    list_display = ("seq", "at", "key_id", "hash")
    readonly_fields = ("seq", "hash", "at", "key_id", "signature")
    change_list_template = "admin/audit/entry/change_list.html"

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        return super().changelist_view(request, {**record_facts(), **(extra_context or {})})


@admin.register(Verification)
class VerificationAdmin(ReadOnly):
    list_display = ("at", "ok", "through_seq", "entries", "problem")
    readonly_fields = ("at", "ok", "through_seq", "entries", "problem")
