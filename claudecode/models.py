"""The team's approval policy: rules that decide a tool use at once, without a person."""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from projects.models import Project


class Action(models.TextChoices):
    ALLOW = "allow", "Allow"
    DENY = "deny", "Deny"


def _compiles(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValidationError(f"not a regular expression: {exc}") from None


def input_text(tool_name: str, tool_input: Any) -> str:
    """What an input pattern is matched against: a Bash command as typed, any other input as JSON."""
    if tool_name == "Bash" and isinstance(tool_input, dict) and isinstance(tool_input.get("command"), str):
        return str(tool_input["command"])
    return json.dumps(tool_input, ensure_ascii=False, sort_keys=True)


class ApprovalRule(models.Model):
    """Tool name pattern + input pattern (+ project, + folder) -> allow or deny; the first matching rule decides."""

    position = models.PositiveIntegerField(default=100, help_text="Rules are tried in this order, lowest first.")
    tool_pattern = models.CharField(
        max_length=200,
        validators=[_compiles],
        help_text="A regular expression the whole tool name must match: Bash, Edit|Write, mcp__.*",
    )
    input_pattern = models.CharField(
        max_length=500,
        blank=True,
        validators=[_compiles],
        help_text="A regular expression searched for in the input (a Bash command as typed, other input as JSON); "
        "empty: any input. Anchor it (^npm test$) to match a whole command.",
    )
    project = models.ForeignKey(
        Project,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Only for this project's agents; empty: every project's (a superuser's rule).",
    )
    folder = models.CharField(
        max_length=500,
        blank=True,
        help_text="Only for agents working in this folder (or below it); empty: any folder.",
    )
    action = models.CharField(max_length=8, choices=Action.choices)
    message = models.CharField(
        max_length=1000, blank=True, help_text="For a deny: what the agent is told (why, and what to do instead)."
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        shown = f"{self.tool_pattern}" + (f" /{self.input_pattern}/" if self.input_pattern else "")
        return f"#{self.pk} {self.get_action_display().lower()} {shown}"

    def clean(self) -> None:
        if self.action == Action.DENY and not self.message.strip():
            raise ValidationError(
                {"message": "A deny rule needs a message: the agent reads it to know what to do instead."}
            )


class CompiledRule:
    """A rule ready to match in microseconds: patterns compiled once per process (see policy)."""

    __slots__ = ("action", "folder", "input", "label", "message", "pk", "project_id", "project_name", "tool")

    def __init__(self, rule: ApprovalRule) -> None:
        self.pk = rule.pk
        self.tool = re.compile(rule.tool_pattern)
        self.input = re.compile(rule.input_pattern) if rule.input_pattern else None
        self.folder = rule.folder.rstrip("/")
        # Its project, and the project's name: an agent whose token works in every project is in the project its
        # folder is named for (projects.models.Project.for_agent), and the rule matches without a query.
        self.project_id = rule.project_id
        self.project_name = rule.project.name.lower() if rule.project_id is not None and rule.project else ""
        self.action = rule.action
        self.message = rule.message
        self.label = f"rule {rule}"

    def matches(self, tool_name: str, text: str, cwd: str, project_id: int | None = None) -> bool:
        """`project_id`: the agent's token's project (None: a token for every project, placed by its folder)."""
        if self.project_id is not None:
            if project_id is not None and project_id != self.project_id:
                return False
            if project_id is None and PurePosixPath(cwd).name.lower() != self.project_name:
                return False
        if self.folder and not (cwd == self.folder or PurePosixPath(cwd).is_relative_to(self.folder)):
            return False
        if not self.tool.fullmatch(tool_name):
            return False
        return self.input is None or self.input.search(text) is not None
