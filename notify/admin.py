from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from core.admin import RecordAdmin
from notify.models import ChatAccount, Delivery, DeliveryAttempt, NotifyPolicy, PushSubscription
from projects.admin import ManagedPerProject, ProjectScoped


@admin.register(NotifyPolicy)
class NotifyPolicyAdmin(ManagedPerProject, admin.ModelAdmin[NotifyPolicy]):
    """Superusers keep every policy; a project's admins keep their project's (one a project).

    A policy with no project is one the migration of issue 37 could not give to a project (it was named as
    agents name their sessions): it stays disabled, with a note, until a superuser gives it a project.
    """

    list_display = ["__str__", "project", "steps", "slack_channel", "email_to", "enabled"]
    list_select_related = ["project"]
    list_filter = ["enabled"]
    search_fields = ["project__name", "former_name", "steps"]
    fields = [
        "project", "steps", "slack_channel", "telegram_chat", "discord_channel", "teams_conversation", "email_to",
        "enabled", "former_name", "note",
    ]  # fmt: skip
    readonly_fields = ["former_name", "note"]


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
        "sent_at", "posted_in", "posted_id", "push_subscription", "acted_at", "created_at",
    )  # fmt: skip
    inlines = [AttemptInline]


@admin.register(PushSubscription)
class PushSubscriptionAdmin(admin.ModelAdmin[PushSubscription]):
    """The browsers people turned push on in: superusers may see and remove any (a lost phone); nobody edits one,
    as only the browser knows its keys. People remove their own on their Notifications page."""

    list_display = ["user", "service", "device", "created_at", "last_sent_at"]
    list_select_related = ["user"]
    search_fields = ["user__username", "endpoint", "device"]
    fields = readonly_fields = ("user", "endpoint", "device", "created_at", "last_sent_at")

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ChatAccount)
class ChatAccountAdmin(admin.ModelAdmin[ChatAccount]):
    """Whose presses in Telegram or Discord answer as whom: superusers link, see and unlink anyone's (as
    `manage.py link` does); people link and unlink their own on their Notifications page."""

    list_display = ["user", "platform", "external_id", "name", "linked_at", "linked_by"]
    list_select_related = ["user"]
    list_filter = ["platform"]
    search_fields = ["user__username", "external_id", "name"]
    fields = ["user", "platform", "external_id", "name", "linked_at", "linked_by"]
    readonly_fields = ["linked_at", "linked_by"]
    autocomplete_fields = ["user"]

    def save_model(self, request: HttpRequest, obj: ChatAccount, form: Any, change: bool) -> None:
        obj.linked_by = f"{request.user} (admin)"
        super().save_model(request, obj, form, change)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)
