"""Rules suggested from history (issue 53): what people keep allowing by hand, offered to the project's admins.

"alice allowed `npm test` in /home/alice/shop 41 times in 14 days and never denied it — make it a rule for
30 days?" A suggestion is made only from what one rule could say exactly and safely: one plain command that is not
on the destructive list (the words all its allowed uses share, grouped by their first two), or one file; asked in one
folder; allowed as asked by people every time in the window (one deny, one edited input or one decision left to the
policy's fallback, and it is not offered); not already allowed by a rule; and not under a policy that gives the
decision to more than one person or to someone other than the author (a rule would let one person decide for them).
Accepting makes the rule, with the sentence as its reason and HOOKBRIDGE_RULE_DAYS as its lifetime.
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from approvals import policies, rules, shell
from approvals.models import Action, ApprovalRule, input_path, shell_command
from projects.models import Project
from questions.kinds import Kind
from questions.kinds.approval import beyond_one_person, destructive
from questions.models import Question, Status

# Answers no person gave: a rule (or a session's grant) decided, or a policy's fallback did.
NOT_A_PERSON = ("rule", "policy")
DAYS = 14
AT_LEAST = 5


@dataclass
class Suggestion:
    project: Project
    tool: str
    command_prefix: str
    path: str
    folder: str
    days: int
    allows: int = 0
    people: list[str] = field(default_factory=list)

    @property
    def what(self) -> str:
        return f"`{self.command_prefix}`" if self.command_prefix else f"{self.tool} {self.path}"

    @property
    def key(self) -> str:
        """What names it in a form: the admin's Accept posts it back, and the suggestion is found again."""
        return "\x1f".join([str(self.project.pk), self.tool, self.command_prefix, self.path, self.folder])

    def __str__(self) -> str:
        who = ", ".join(self.people)
        times = "once" if self.allows == 1 else f"{self.allows} times"
        where = f" in {self.folder}" if self.folder else ""
        return (
            f"{who} allowed {self.what}{where} {times} in {self.days} days and never denied it — "
            f"make it a rule for {settings.HOOKBRIDGE_RULE_DAYS} days?"
        )

    def rule(self, by: Any) -> ApprovalRule:
        return ApprovalRule(
            tool_pattern=self.tool,
            command_prefix=self.command_prefix,
            path=self.path,
            folder=self.folder,
            project=self.project,
            action=Action.ALLOW,
            owner=by if getattr(by, "is_authenticated", False) else None,
            reason=str(self)[:500],
            expires_at=timezone.now() + timedelta(days=settings.HOOKBRIDGE_RULE_DAYS),
            source="suggestion",
        )

    def accept(self, by: Any) -> ApprovalRule:
        # Its own transaction: once saved the rule decides every later approval of its kind.
        with transaction.atomic():
            rule = self.rule(by)
            rule.full_clean()
            rule.save()
        return rule


def _what_a_rule_would_say(question: Question) -> tuple[str, tuple[str, ...], str] | None:
    """(tool, the command's words, path) of what one rule could allow of this approval; None: no safe rule would."""
    payload = question.payload
    tool = str(payload.get("tool_name") or "")
    tool_input = payload.get("tool_input")
    command = shell_command(tool, tool_input)
    if command is not None:
        parsed = shell.parse(command, str(payload.get("cwd") or ""))
        if destructive(command) or not parsed.readable or len(parsed.commands) != 1:
            return None
        one = parsed.commands[0]
        # The words as written up to the first one computed at run time ($HOME, a glob): a rule names words.
        literal = one.words[: next((i for i, plain in enumerate(one.literal) if not plain), len(one.words))]
        if len(literal) < min(2, len(one.words)) or one.open_ended:
            return None
        return tool, literal, ""
    path = input_path(tool_input)
    return (tool, (), path) if path and tool else None


def suggest(projects: list[Project], days: int = DAYS, at_least: int = AT_LEAST) -> list[Suggestion]:
    """The rules people's own decisions of the last `days` days suggest in `projects`, most allowed first."""
    since = timezone.now() - timedelta(days=days)
    by_id = {project.pk: project for project in projects}
    found: dict[tuple[Any, ...], Suggestion] = {}
    spoiled: set[tuple[Any, ...]] = set()
    asked = (
        Question.objects.filter(project_id__in=list(by_id), kind=Kind.APPROVAL, created_at__gte=since)
        .exclude(status=Status.PENDING)
        .select_related("answer")
        .order_by("created_at")
    )
    people: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    shared: dict[tuple[Any, ...], tuple[str, ...]] = {}
    for question in asked:
        said = _what_a_rule_would_say(question)
        if said is None:
            continue
        folder = str(question.payload.get("cwd") or "")
        tool, words, path = said
        # Grouped by the first two words (as "Allow and make a rule" proposes); the rule is the words all of them
        # share: `npm run lint` each time suggests exactly that, never every `npm run …`.
        key = (question.project_id, tool, words[:2], path, folder)
        answer = getattr(question, "answer", None) if question.status == Status.ANSWERED else None
        if answer is None or answer.source in NOT_A_PERSON:
            if answer is not None and answer.source == "policy":
                spoiled.add(key)  # nobody decided it: that is not a person allowing it
            continue
        if answer.data.get("behavior") != "allow" or set(answer.data) - {"behavior", "grantMinutes"}:
            spoiled.add(key)  # denied, or allowed only as edited
            continue
        suggestion = found.get(key)
        if suggestion is None:
            suggestion = found[key] = Suggestion(by_id[question.project_id], tool, "", path, folder, days)
            shared[key] = words
        else:
            shared[key] = _leading(shared[key], words)
        suggestion.allows += 1
        for name in answer.answered_by.split(", "):
            if name and name not in people[key]:
                people[key].append(name)
    out = []
    for key, suggestion in found.items():
        if key in spoiled or suggestion.allows < at_least:
            continue
        suggestion.people = people[key]
        suggestion.command_prefix = shlex.join(shared[key]) if shared[key] else ""
        if _already_decided(suggestion) or _needs_more_than_one(suggestion):
            continue
        out.append(suggestion)
    return sorted(out, key=lambda s: (-s.allows, s.project.name, s.what))


def _leading(one: tuple[str, ...], other: tuple[str, ...]) -> tuple[str, ...]:
    """The words both start with."""
    out: list[str] = []
    for a, b in zip(one, other, strict=False):
        if a != b:
            break
        out.append(a)
    return tuple(out)


def _example_input(suggestion: Suggestion) -> dict[str, Any]:
    if suggestion.command_prefix:
        return {"command": suggestion.command_prefix}
    return {"file_path": suggestion.path}


def _already_decided(suggestion: Suggestion) -> bool:
    ruling = rules.decide(
        suggestion.tool, _example_input(suggestion), suggestion.folder, rules.rules(), suggestion.project.pk
    )
    return ruling is not None


def _needs_more_than_one(suggestion: Suggestion) -> bool:
    use = policies.ToolUse(
        suggestion.project.pk, "", suggestion.tool, _example_input(suggestion), suggestion.folder, None
    )
    policy = policies.first_match(use)
    if policy is None:
        return False
    return beyond_one_person(policy.requirement)


def find(projects: list[Project], key: str) -> Suggestion | None:
    """The suggestion `key` names, if history still suggests it (an Accept is checked again, never trusted)."""
    return next((s for s in suggest(projects) if s.key == key), None)
