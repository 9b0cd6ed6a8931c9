"""The company's directory as the admin sees it: who signed in from where, its groups, the SCIM tokens.

Superusers only: these rows say who may sign in and what every group gives, across projects. Groups and their
members are the directory's (SCIM or a sign-in's claim), so here they are read, not edited.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from identity.models import DirectoryGroup, Identity, Passkey, ScimToken


class SuperusersOnly:
    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Identity)
class IdentityAdmin(SuperusersOnly, admin.ModelAdmin[Identity]):
    list_display = ["user", "subject", "external_id", "provisioned", "last_signin_at", "removed_at"]
    list_filter = ["provisioned", ("removed_at", admin.EmptyFieldListFilter)]
    search_fields = ["user__username", "user__email", "subject", "external_id"]
    list_select_related = ["user"]
    readonly_fields = [
        "user", "scim_id", "issuer", "subject", "external_id", "display_name", "provisioned", "created_at",
        "updated_at", "last_signin_at", "removed_at", "scim_resource",
    ]  # fmt: skip


@admin.register(DirectoryGroup)
class DirectoryGroupAdmin(SuperusersOnly, admin.ModelAdmin[DirectoryGroup]):
    list_display = ["display_name", "external_id", "member_count", "updated_at"]
    search_fields = ["display_name", "external_id"]
    readonly_fields = ["display_name", "scim_id", "external_id", "member_names", "created_at", "updated_at"]
    exclude = ["members"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[DirectoryGroup]:
        return super().get_queryset(request).prefetch_related("members")

    @admin.display(description="Members")
    def member_count(self, group: DirectoryGroup) -> int:
        return len(group.members.all())

    @admin.display(description="Members")
    def member_names(self, group: DirectoryGroup) -> str:
        return ", ".join(person.get_username() for person in group.members.all()) or "nobody"


@admin.register(ScimToken)
class ScimTokenAdmin(SuperusersOnly, admin.ModelAdmin[ScimToken]):
    """A token is shown once, when it is made; only its digest is kept."""

    list_display = ["name", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return self.has_module_permission(request)

    def get_fields(self, request: HttpRequest, obj: ScimToken | None = None) -> list[Any]:
        return ["name"] if obj is None else ["name", "created_at", "last_used_at", "revoked_at"]

    def save_model(self, request: HttpRequest, obj: ScimToken, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        made, token = ScimToken.issue(obj.name)
        obj.pk, obj.token_hash, obj.created_at = made.pk, made.token_hash, made.created_at
        obj._state.adding = False
        messages.warning(
            request, f"The SCIM token for “{made.name}”, shown this once: {token} — give it to the directory now."
        )

    @admin.action(description="Revoke the selected SCIM tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ScimToken]) -> None:
        revoked = 0
        for token in queryset.filter(revoked_at__isnull=True):
            token.revoked_at = timezone.now()
            token.save()  # through the model: each revocation is recorded
            revoked += 1
        messages.success(request, f"Revoked {revoked} SCIM token(s).")


@admin.register(Passkey)
class PasskeyAdmin(SuperusersOnly, admin.ModelAdmin[Passkey]):
    """A lost phone's passkey is removed here (each removal recorded); nobody adds one for someone else."""

    list_display = ["name", "user", "created_at", "last_used_at"]
    search_fields = ["name", "user__username"]
    list_select_related = ["user"]
    readonly_fields = ["name", "user", "created_at", "last_used_at"]
    fields = ["name", "user", "created_at", "last_used_at"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)
