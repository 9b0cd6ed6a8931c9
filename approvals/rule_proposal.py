"""“Allow and make a rule” (issues 42, 53): the narrowest rule that would decide one approval, and what it decides.

The rule is proposed from the approval itself, in words: its tool, and its command's first two words (`npm test`,
`git status`: a prefix of words, never of characters) or the file it touches. A compound command is proposed as
exactly its commands; a command on the destructive list is never proposed as a prefix: exactly that command,
with the card's warning, and only where one person may decide the approval alone (its policy says who must). The
person may widen or narrow it, sees which waiting approvals it would decide, and only then saves it, with a reason
and an expiry, which allows this approval and those.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from approvals import shell
from approvals.models import Action, ApprovalRule, CompiledRule, input_path, shell_command
from approvals.rules import decide
from projects.access import Access
from projects.models import Role
from questions.kinds import Kind
from questions.kinds.approval import beyond_one_person, destructive
from questions.models import AlreadyResolved, NotDecided, Question


def proposed_patterns(question: Question) -> dict[str, str]:
    """The narrowest rule that still reads as one: the tool, and a command's first words, its commands, or a path."""
    tool = str(question.payload.get("tool_name") or "")
    tool_input = question.payload.get("tool_input")
    proposed = {"tool_pattern": tool, "command": "", "command_prefix": "", "path": ""}
    command = shell_command(tool, tool_input)
    if command is not None:
        parsed = shell.parse(command, str(question.payload.get("cwd") or ""))
        if destructive(command) or len(parsed.commands) != 1 or not parsed.readable:
            proposed["command"] = command.strip()
        else:
            proposed["command_prefix"] = " ".join(parsed.commands[0].words[:2])
    elif (path := input_path(tool_input)) is not None:
        proposed["path"] = path
    what = command.strip() if command is not None else (input_path(tool_input) or tool)
    proposed["reason"] = f"Made from {question.asker_name}'s approval of {what}"[:500]
    proposed["days"] = str(settings.HOOKBRIDGE_RULE_DAYS)
    return proposed


class RuleProposal(forms.Form):
    # The model's own checks (a command must be plain words), so a proposal saves exactly when the admin would.
    tool_pattern = forms.CharField(
        max_length=200, validators=ApprovalRule._meta.get_field("tool_pattern").validators, label="Tool"
    )
    command_prefix = forms.CharField(
        max_length=500,
        required=False,
        validators=ApprovalRule._meta.get_field("command_prefix").validators,
        label="Commands starting with these words",
    )
    command = forms.CharField(
        max_length=2000,
        required=False,
        validators=ApprovalRule._meta.get_field("command").validators,
        label="Or exactly this command",
    )
    path = forms.CharField(max_length=500, required=False, label="Or files matching (src/**, *.md)")
    reason = forms.CharField(max_length=500, label="Why (kept with the rule)")
    days = forms.IntegerField(min_value=1, max_value=365, label="Stops deciding after (days)")

    def __init__(self, *args: Any, question: Question, seen: Access, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.question = question
        self.seen = seen

    @property
    def warning(self) -> list[str]:
        """What in the approval's command cannot be undone (the card's warning), as the command spells it."""
        command = shell_command(
            str(self.question.payload.get("tool_name") or ""), self.question.payload.get("tool_input")
        )
        return destructive(command) if command else []

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if self.errors:
            return cleaned
        given = [name for name in ("command", "command_prefix", "path") if cleaned.get(name)]
        if len(given) > 1:
            raise forms.ValidationError("Say one thing the rule matches: a command's first words, a command, or files.")
        if self.warning and cleaned.get("command_prefix"):
            raise forms.ValidationError(
                "This command cannot be undone: a rule may allow exactly it (the command box), never every command "
                "that starts like it."
            )
        quorum = int(self.question.requirement.get("quorum") or 1)
        if self.warning and beyond_one_person(self.question.requirement):
            raise forms.ValidationError(
                f"{self.question.requirement.get('policy')} needs {quorum} people for this approval: a rule that "
                "allows it would let one person decide for them. Decide it on its card."
            )
        if not self._decides(self.question):
            raise forms.ValidationError("This rule would not decide the approval it is made from: widen it.")
        return cleaned

    def rule(self) -> ApprovalRule:
        """The rule as it would be saved: allow, in the approval's project (for every project's agents without one)."""
        return ApprovalRule(
            tool_pattern=self.cleaned_data["tool_pattern"],
            command=self.cleaned_data["command"],
            command_prefix=self.cleaned_data["command_prefix"],
            path=self.cleaned_data["path"],
            project=self.question.project,
            action=Action.ALLOW,
            reason=self.cleaned_data["reason"],
            expires_at=timezone.now() + timedelta(days=self.cleaned_data["days"]),
            source="approval",
            made_from=str(self.question.payload.get("digest") or ""),
        )

    def compiled(self) -> CompiledRule:
        return CompiledRule(self.rule())

    def _decides(self, question: Question, compiled: CompiledRule | None = None) -> bool:
        payload = question.payload
        ruling = decide(
            str(payload.get("tool_name") or ""),
            payload.get("tool_input"),
            str(payload.get("cwd") or ""),
            [compiled or self.compiled()],
            question.project_id,
        )
        return ruling is not None and ruling.action == Action.ALLOW

    def decides(self) -> list[Question]:
        """The waiting approvals this person sees that the rule would decide, this one first."""
        compiled = self.compiled()
        waiting = self.seen.visible(Question.objects.pending().filter(kind=Kind.APPROVAL)).order_by("created_at")
        found = [q for q in waiting if self._decides(q, compiled)]
        return sorted(found, key=lambda q: q.pk != self.question.pk)

    def save_and_allow(self, by_user: Any, remote_addr: str | None) -> tuple[ApprovalRule, list[Question]]:
        """Saves the rule, then allows what it decides now; each answer is its own, the first answer still wins."""
        # The rule alone in a transaction: once saved it decides every later approval, whatever happens to these.
        with transaction.atomic():
            rule = self.rule()
            rule.owner = by_user if getattr(by_user, "is_authenticated", False) else None
            rule.save()
        allowed = []
        for question in self.decides():
            try:
                question.record_answer({"behavior": "allow"}, by_user=by_user, remote_addr=remote_addr)
            except (AlreadyResolved, NotDecided):  # decided meanwhile, or its policy needs more people
                continue
            allowed.append(question)
        return rule, allowed


def may_make_rules(seen: Access, question: Question) -> bool:
    """A rule decides for everyone in its project: its admins make them (a superuser for approvals in none)."""
    return seen.may(question.project_id, Role.ADMIN) if question.project_id is not None else seen.everything
