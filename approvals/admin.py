"""The team's rules and policies in the admin: who made each, why, until when, how often it decided."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils import timezone

from approvals.models import ApprovalPolicy, ApprovalRule, Grant
from projects.admin import ManagedPerProject


@admin.register(ApprovalRule)
class ApprovalRuleAdmin(ManagedPerProject, admin.ModelAdmin[ApprovalRule]):
    """Rules decide a tool use without a person: any deny rule that matches denies; an allow needs every command
    of a compound command to be allowed. An expired rule decides nothing.

    Every decision a rule makes is kept in the question history (kind "approval", answered by "rule #…").
    A project's admins keep their project's rules; rules for every project are superusers'.
    """

    list_display = [
        "position",
        "action",
        "describe",
        "project",
        "folder",
        "owner",
        "state",
        "decided_count",
        "last_decided_at",
        "source",
    ]
    list_select_related = ["project", "owner"]
    list_display_links = ["describe"]
    list_filter = ["action", "enabled", "source", ("project", admin.RelatedOnlyFieldListFilter)]
    search_fields = [
        "tool_pattern",
        "command",
        "command_prefix",
        "path",
        "input_pattern",
        "folder",
        "message",
        "reason",
    ]
    fields = [
        "position",
        "action",
        "tool_pattern",
        "command_prefix",
        "command",
        "path",
        "input_pattern",
        "project",
        "folder",
        "message",
        "reason",
        "owner",
        "expires_at",
        "enabled",
        "source",
        "made_from",
        "decided_count",
        "last_decided_at",
    ]
    readonly_fields = ["source", "made_from", "decided_count", "last_decided_at"]

    @admin.display(description="matches")
    def describe(self, rule: ApprovalRule) -> str:
        return rule.describe()

    @admin.display(description="state")
    def state(self, rule: ApprovalRule) -> str:
        if not rule.enabled:
            return "off"
        if rule.expired:
            return f"expired {timezone.localtime(rule.expires_at):%Y-%m-%d}: decides nothing"
        if rule.expires_at:
            return f"until {timezone.localtime(rule.expires_at):%Y-%m-%d}"
        return "on"

    def save_model(self, request: HttpRequest, obj: ApprovalRule, form: Any, change: bool) -> None:
        if obj.owner_id is None and request.user.is_authenticated:
            obj.owner = request.user
        super().save_model(request, obj, form, change)


@admin.register(ApprovalPolicy)
class ApprovalPolicyAdmin(ManagedPerProject, admin.ModelAdmin[ApprovalPolicy]):
    """Who must decide a project's approvals that match (quorum, deciders, self-approval), and what nobody
    deciding in time means. A policy applied from a file (`policy apply`) is read-only here: edit the file."""

    list_display = ["project", "position", "name", "quorum", "self_approval", "timeout_seconds", "fallback", "source"]
    list_select_related = ["project"]
    list_filter = [("project", admin.RelatedOnlyFieldListFilter), "fallback"]
    search_fields = ["name", "command_prefix", "tool_pattern"]

    def get_readonly_fields(self, request: HttpRequest, obj: ApprovalPolicy | None = None) -> Any:
        if obj is not None and obj.source not in ("", "admin"):
            return [field.name for field in ApprovalPolicy._meta.fields]
        return ["source"]


@admin.register(Grant)
class GrantAdmin(ManagedPerProject, admin.ModelAdmin[Grant]):
    """People's "Allow for this session": what each let through at once, in which session, until when."""

    project_path = "session__project"
    list_display = ["session", "tool_name", "describe", "granted_by", "created_at", "expires_at", "revoked_at"]
    list_select_related = ["session", "granted_by"]
    readonly_fields = ["session", "tool_name", "command_prefix", "path", "granted_by", "question", "made_from",
                       "created_at", "expires_at", "revoked_at", "revoked_by"]  # fmt: skip

    @admin.display(description="allows")
    def describe(self, grant: Grant) -> str:
        return grant.describe()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # made from an approval's card, never by hand
