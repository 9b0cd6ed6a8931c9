from __future__ import annotations

from django.contrib import admin

from claudecode.models import ApprovalRule


@admin.register(ApprovalRule)
class ApprovalRuleAdmin(admin.ModelAdmin[ApprovalRule]):
    """The team's policy: the first enabled rule that matches a tool use decides it, without a person.

    Every decision a rule makes is kept in the question history (kind "approval", answered by "rule #…").
    """

    list_display = ["position", "tool_pattern", "input_pattern", "project", "action", "message", "enabled"]
    list_display_links = ["tool_pattern"]
    list_editable = ["position", "enabled"]
    list_filter = ["action", "enabled"]
    search_fields = ["tool_pattern", "input_pattern", "project", "message"]
    fields = ["position", "tool_pattern", "input_pattern", "project", "action", "message", "enabled"]
