from __future__ import annotations

from django.contrib import admin

from claudecode.models import ApprovalRule
from projects.admin import ManagedPerProject


@admin.register(ApprovalRule)
class ApprovalRuleAdmin(ManagedPerProject, admin.ModelAdmin[ApprovalRule]):
    """The team's policy: the first enabled rule that matches a tool use decides it, without a person.

    Every decision a rule makes is kept in the question history (kind "approval", answered by "rule #…").
    A project's admins keep their project's rules; rules for every project are superusers'.
    """

    list_display = ["position", "tool_pattern", "input_pattern", "project", "folder", "action", "message", "enabled"]
    list_select_related = ["project"]
    list_display_links = ["tool_pattern"]
    list_editable = ["position", "enabled"]
    list_filter = ["action", "enabled", ("project", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["tool_pattern", "input_pattern", "folder", "message"]
    fields = ["position", "tool_pattern", "input_pattern", "project", "folder", "action", "message", "enabled"]
