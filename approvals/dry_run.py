"""The admin's dry run (issue 53): before an edited rule or policy is saved, what it would decide otherwise.

The project's latest approvals are replayed twice, as `policy test` replays a file (approvals.policyfile.replay):
against the rules and policies in force now, and against the same set with the edit in place. Listed are the
approvals whose outcome the edit alone changes, so a difference history already had is not blamed on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q
from django.utils import timezone

from approvals.models import ApprovalPolicy, ApprovalRule
from approvals.policyfile import PolicyFile, describe_policy, replay
from projects.models import Project
from questions.models import Question

LAST = 500


def _sets(project: Project, edited: ApprovalRule | ApprovalPolicy | None) -> PolicyFile:
    found = PolicyFile(project=project, source="admin")
    rules = ApprovalRule.objects.filter(Q(project=project) | Q(project__isnull=True), enabled=True)
    found.rules = [rule for rule in rules if rule.pk is None or not _is(rule, edited)]
    found.approvals = [policy for policy in ApprovalPolicy.objects.filter(project=project) if not _is(policy, edited)]
    if isinstance(edited, ApprovalRule) and edited.enabled:
        found.rules.append(edited)
        found.rules.sort(key=lambda rule: (rule.position, rule.pk or 0))
    elif isinstance(edited, ApprovalPolicy):
        found.approvals.append(edited)
        found.approvals.sort(key=lambda policy: (policy.position, policy.pk or 1 << 62))
    return found


def _is(row: ApprovalRule | ApprovalPolicy, edited: ApprovalRule | ApprovalPolicy | None) -> bool:
    return edited is not None and type(row) is type(edited) and edited.pk is not None and row.pk == edited.pk


@dataclass(frozen=True)
class Change:
    """One approval the edit would decide otherwise: what was decided then, what the set in force decides, and
    what the set with the edit would."""

    question: Question
    then: str
    in_force: str
    after: str

    def __str__(self) -> str:
        when = timezone.localtime(self.question.created_at).strftime("%Y-%m-%d %H:%M")
        return f"{when} {self.question.asker_name}: {self.question.short_title}: {self.in_force} -> {self.after}"


def describe(edited: ApprovalRule | ApprovalPolicy) -> str:
    """The edit in words: "the new rule deny Bash `npm run …`", "rule #3 as edited: …"."""
    if isinstance(edited, ApprovalRule):
        said = f"{edited.get_action_display().lower()} {edited.describe()}"
        return f"rule #{edited.pk} as edited: {said}" if edited.pk else f"the new rule: {said}"
    said = f"{edited.name} {describe_policy(edited)}"
    return f"policy #{edited.pk} as edited: {said}" if edited.pk else f"the new policy: {said}"


def of_edit(edited: ApprovalRule | ApprovalPolicy, last: int = LAST) -> tuple[int, list[Change]]:
    """How many approvals were read, and each whose outcome `edited` (unsaved) would change."""
    # A rule for every project (no project): each project's history.
    projects = [edited.project] if edited.project is not None else list(Project.objects.all())
    read, found = 0, []
    for project in projects:
        _, before = replay(_sets(project, None), last)
        counted, after = replay(_sets(project, edited), last)
        read += counted
        was = {d.question.pk: d for d in before}
        will = {d.question.pk: d for d in after}
        for pk in [*will, *(pk for pk in was if pk not in will)]:
            old, new = was.get(pk), will.get(pk)
            if old is not None and new is not None and old.with_file == new.with_file:
                continue
            one = new or old
            assert one is not None
            found.append(
                Change(
                    one.question,
                    then=one.today,
                    in_force=old.with_file if old is not None else "the same",
                    after=new.with_file if new is not None else "the same",
                )
            )
    found.sort(key=lambda change: change.question.created_at, reverse=True)
    return read, found
