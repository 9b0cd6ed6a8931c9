"""The team's rules, compiled once per process and matched without touching the database.

A change in the admin clears this process's copy at once (the model signals below); other
workers re-read within RULES_TTL, so an edited rule applies everywhere within a second.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.utils import timezone

from claudecode import runtime as state
from claudecode.models import ApprovalRule, CompiledRule, input_text
from core.db import database_sync_to_async
from questions.decisions import Decision

RULES_TTL = 1.0


def cached() -> list[CompiledRule] | None:
    """This process's rules if read less than RULES_TTL ago; None: read them (`rules`) first."""
    if state.approval_rules is None or time.monotonic() - state.approval_rules_read_at > RULES_TTL:
        return None
    return state.approval_rules


def rules() -> list[CompiledRule]:
    """The enabled rules, in order (reads the database when this process's copy is stale)."""
    found = cached()
    if found is None:
        found = [CompiledRule(rule) for rule in ApprovalRule.objects.filter(enabled=True).select_related("project")]
        state.approval_rules, state.approval_rules_read_at = found, time.monotonic()
    return found


def decide(
    tool_name: str, tool_input: Any, cwd: str, compiled: list[CompiledRule], project_id: int | None = None
) -> CompiledRule | None:
    """The first of `compiled` that matches this tool use, or None: a person decides."""
    text = input_text(tool_name, tool_input)
    for rule in compiled:
        if rule.matches(tool_name, text, cwd, project_id):
            return rule
    return None


async def matching(tool_name: str, tool_input: Any, cwd: str, project_id: int | None = None) -> CompiledRule | None:
    """The rule that decides this tool use, if any; the database is read only when this process's copy is stale."""
    compiled = cached()
    if compiled is None:
        compiled = await database_sync_to_async(rules)()
    return decide(tool_name, tool_input, cwd, compiled, project_id)


@dataclass(frozen=True)
class RuleDecision:
    """A team rule's decision on one tool use: asked at `asked_at`, decided `decided_in_us` later."""

    rule: CompiledRule
    asked_at: datetime
    decided_in_us: float

    @property
    def decision(self) -> dict[str, Any]:
        """As the host reads a decision: {"behavior": "allow"} or {"behavior": "deny", "message": …}."""
        return (Decision.deny(self.rule.message) if self.rule.action == "deny" else Decision.allow()).as_dict()


async def decide_by_rule(
    tool_name: str, tool_input: Any, cwd: str, *, since: float, project_id: int | None = None
) -> RuleDecision | None:
    """The team's decision on a tool use, if a rule makes one; None: a person decides.

    Both ways an approval is asked (Claude Code's PermissionRequest hook, the permission-prompt
    tool) decide here. `since` is time.perf_counter() when the request was in hand: a rule's
    time is counted from there, and history shows it.
    """
    rule = await matching(tool_name, tool_input, cwd, project_id)
    if rule is None:
        return None
    decided_in_us = (time.perf_counter() - since) * 1e6
    return RuleDecision(rule, timezone.now() - timedelta(microseconds=decided_in_us), decided_in_us)


@receiver([post_save, post_delete], sender=ApprovalRule)
def _forget(**kwargs: Any) -> None:
    state.approval_rules = None
