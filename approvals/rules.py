"""The team's rules, compiled once per process and matched without touching the database.

A shell command is read into the simple commands it would run (approvals.shell). Any deny rule that speaks of
one of them (or of the whole text) denies; otherwise the command is allowed only when every one of its commands
is allowed by some allow rule, and the parser could read all of it: what it cannot read, a person decides.

A change in the admin clears this process's copy at once (the model signals below); other
workers re-read within RULES_TTL, so an edited rule applies everywhere within a second.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.utils import timezone

from approvals import runtime as state
from approvals import shell
from approvals.models import Action, ApprovalRule, CompiledRule, shell_command
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


@dataclass(frozen=True)
class Ruling:
    """What the rules decided: `action`, by `rules` (a deny: the one that denied; an allow: one per command)."""

    action: str
    rules: tuple[CompiledRule, ...]

    @property
    def rule(self) -> CompiledRule:
        return self.rules[0]

    @property
    def label(self) -> str:
        return " and ".join(rule.label for rule in self.rules)

    @property
    def message(self) -> str:
        return self.rule.message


def decide(
    tool_name: str, tool_input: Any, cwd: str, compiled: list[CompiledRule], project_id: int | None = None
) -> Ruling | None:
    """What the rules decide about this tool use, or None: a person decides."""
    here = [rule for rule in compiled if rule.applies(tool_name, cwd, project_id)]
    if not here:
        return None
    deny = [rule for rule in here if rule.action == Action.DENY]
    allow = [rule for rule in here if rule.action == Action.ALLOW]
    command = shell_command(tool_name, tool_input)
    if command is None:
        for rules_ in (deny, allow):
            found = next((rule for rule in rules_ if rule.matches_input(tool_name, tool_input, cwd)), None)
            if found is not None:
                return Ruling(found.action, (found,))
        return None
    parsed = shell.parse(command, cwd)
    for rule in deny:
        if _denies(rule, command, parsed):
            return Ruling(Action.DENY, (rule,))
    if not parsed.readable:
        return None
    allowing: list[CompiledRule] = []
    for one in parsed.commands:
        found = next((rule for rule in allow if rule.matches_command(one)), None)
        if found is None:
            return None
        if found not in allowing:
            allowing.append(found)
    return Ruling(Action.ALLOW, tuple(allowing))


def _denies(rule: CompiledRule, command: str, parsed: shell.Parsed) -> bool:
    """Deny rules stay broad: the whole text, any command it runs, and (unread) the words as typed."""
    if rule.command is None and rule.prefix is None and rule.input is None:
        return rule.path is None  # any use of the tool
    if rule.input is not None and rule.input.search(command):
        return True
    if any(rule.matches_command(one) for one in parsed.commands):
        return True
    if not parsed.readable and rule.prefix is not None:
        words = r"\s+".join(re.escape(word) for word in rule.prefix)
        return re.search(rf"(?<![\w-]){words}(?![\w-])", command) is not None
    return False


async def matching(tool_name: str, tool_input: Any, cwd: str, project_id: int | None = None) -> Ruling | None:
    """The rules' decision on this tool use, if any; the database is read only when this process's copy is stale."""
    compiled = cached()
    if compiled is None:
        compiled = await database_sync_to_async(rules)()
    return decide(tool_name, tool_input, cwd, compiled, project_id)


@dataclass(frozen=True)
class RuleDecision:
    """A team rule's decision on one tool use: asked at `asked_at`, decided `decided_in_us` later."""

    ruling: Ruling
    asked_at: datetime
    decided_in_us: float

    @property
    def rule(self) -> CompiledRule:
        return self.ruling.rule

    @property
    def label(self) -> str:
        return self.ruling.label

    @property
    def decision(self) -> dict[str, Any]:
        """As the host reads a decision: {"behavior": "allow"} or {"behavior": "deny", "message": …}."""
        if self.ruling.action == Action.DENY:
            return Decision.deny(self.ruling.message).as_dict()
        return Decision.allow().as_dict()


async def decide_by_rule(
    tool_name: str, tool_input: Any, cwd: str, *, since: float, project_id: int | None = None
) -> RuleDecision | None:
    """The team's decision on a tool use, if the rules make one; None: a person decides.

    Every way an approval is asked (each host's hooks, the permission-prompt tool) decides here. `since` is
    time.perf_counter() when the request was in hand: a rule's time is counted from there, and history shows it.
    """
    ruling = await matching(tool_name, tool_input, cwd, project_id)
    if ruling is None:
        return None
    decided_in_us = (time.perf_counter() - since) * 1e6
    return RuleDecision(ruling, timezone.now() - timedelta(microseconds=decided_in_us), decided_in_us)


@receiver([post_save, post_delete], sender=ApprovalRule)
def _forget(**kwargs: Any) -> None:
    state.approval_rules = None
