from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest

from core.admin import RecordAdmin
from notify.models import Delivery, DeliveryAttempt, NotifyPolicy
from notify.scheduling import named_any
from projects import access
from projects.admin import ProjectScoped
from projects.models import Role


@admin.register(NotifyPolicy)
class NotifyPolicyAdmin(admin.ModelAdmin[NotifyPolicy]):
    """Superusers keep every policy; a project's admins keep the policy named for their project."""

    list_display = ["project", "steps", "slack_channel", "email_to"]
    search_fields = ["project"]

    def _theirs(self, request: HttpRequest) -> list[str] | None:
        """The names a person's policies have (None: any name, a superuser)."""
        if request.user.is_superuser:
            return None
        return [project.name for project in access.projects_with(request.user, Role.ADMIN)]

    def get_queryset(self, request: HttpRequest) -> QuerySet[NotifyPolicy]:
        names = self._theirs(request)
        found = super().get_queryset(request)
        return found if names is None else found.filter(named_any(names))

    def _may(self, request: HttpRequest, obj: NotifyPolicy | None) -> bool:
        names = self._theirs(request)
        if names is None:
            return bool(request.user.is_staff)
        if not request.user.is_staff or not names:
            return False
        return obj is None or obj.project.lower() in {name.lower() for name in names}

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._may(request, None)

    def has_view_permission(self, request: HttpRequest, obj: NotifyPolicy | None = None) -> bool:
        return self._may(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._may(request, None)

    def has_change_permission(self, request: HttpRequest, obj: NotifyPolicy | None = None) -> bool:
        return self._may(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: NotifyPolicy | None = None) -> bool:
        return self._may(request, obj)

    def save_model(self, request: HttpRequest, obj: NotifyPolicy, form: Any, change: bool) -> None:
        names = self._theirs(request)
        if names is not None and obj.project.lower() not in {name.lower() for name in names}:
            raise PermissionDenied(f"project: a policy of yours is named for one of your projects ({', '.join(names)})")
        super().save_model(request, obj, form, change)


class AttemptInline(RecordAdmin, admin.TabularInline[DeliveryAttempt, Delivery]):
    model = DeliveryAttempt
    fields = readonly_fields = ("at", "ok", "error", "took_ms")
    extra = 0


@admin.register(Delivery)
class DeliveryAdmin(ProjectScoped, RecordAdmin, admin.ModelAdmin[Delivery]):
    project_path = "question__project"
    """Every step of every question's escalation: where it went, when, how it went, and each attempt."""

    list_display = ["question", "channel", "purpose", "target", "status", "attempts", "due_at", "sent_at", "last_error"]
    list_filter = ["channel", "status", "purpose"]
    search_fields = ["question__text", "target", "last_error"]
    date_hierarchy = "due_at"
    list_select_related = ["question"]
    fields = readonly_fields = (
        "question", "purpose", "channel", "target", "status", "due_at", "attempts", "last_error", "claimed_at",
        "sent_at", "slack_channel_id", "slack_ts", "created_at",
    )  # fmt: skip
    inlines = [AttemptInline]
