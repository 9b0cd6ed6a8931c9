from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from projects.admin import ManagedPerProject
from tokens.models import AgentToken


@admin.register(AgentToken)
class AgentTokenAdmin(ManagedPerProject, admin.ModelAdmin[AgentToken]):
    """Superusers: every token, and tokens for every project (empty project). A project's admins: its tokens."""

    list_display = [
        "name",
        "scope",
        "project",
        "user",
        "oauth_client",
        "prefix",
        "created_at",
        "last_used_at",
        "is_active",
    ]
    list_filter = [
        "scope",
        "may_ask_in_background",
        ("project", admin.RelatedOnlyFieldListFilter),
        ("revoked_at", admin.EmptyFieldListFilter),
        ("oauth_client", admin.EmptyFieldListFilter),
    ]
    search_fields = ["name", "prefix", "user__username"]
    list_select_related = ["user", "oauth_client", "project"]
    readonly_fields = ["prefix", "created_at", "last_used_at", "user", "oauth_client"]
    actions = ["revoke"]

    def get_fields(self, request: HttpRequest, obj: AgentToken | None = None) -> list[Any]:
        if obj is None:
            return ["name", "scope", "project", "may_ask_in_background", "expires_at"]
        return [
            "name",
            "scope",
            "project",
            "may_ask_in_background",
            "user",
            "oauth_client",
            "prefix",
            "created_at",
            "last_used_at",
            "expires_at",
            "revoked_at",
        ]

    @admin.display(boolean=True, description="Active")
    def is_active(self, obj: AgentToken) -> bool:
        return obj.is_active

    def save_model(self, request: HttpRequest, obj: AgentToken, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        raw = obj.set_new_secret()
        super().save_model(request, obj, form, change)
        messages.warning(request, f"Token for '{obj.name}' (shown once, copy it now): {raw}")

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[AgentToken]) -> None:
        for token in queryset:
            token.disconnect()  # a signed-in client's OAuth tokens too
        self.message_user(request, f"Revoked {queryset.count()} token(s).", messages.SUCCESS)
