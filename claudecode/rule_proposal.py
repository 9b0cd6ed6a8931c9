"""“Allow and make a rule” (issue 42): the narrowest rule that would have decided one approval, and what it decides.

The rule is proposed from the approval itself: its tool, and its command's first two words (`npm test`, `git
status`) or the file it touches; the person may widen or narrow the patterns, sees which waiting approvals the rule
would decide, and only then saves it, which allows this approval and those.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms
from django.db import transaction

from claudecode.models import Action, ApprovalRule, CompiledRule, input_text
from projects.access import Access
from projects.models import Role
from questions.kinds import Kind
from questions.models import AlreadyResolved, Question


def _literal(text: str) -> str:
    """`text` matched as typed, and readable: only what a regular expression reads as syntax is escaped
    (re.escape also marks spaces and hyphens, which a person then has to read past)."""
    return re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)


def proposed_patterns(question: Question) -> dict[str, str]:
    """The narrowest patterns that still read as a rule: the tool; a command's program and first word, or a path."""
    tool = str(question.payload.get("tool_name") or "")
    tool_input = question.payload.get("tool_input")
    pattern = ""
    if isinstance(tool_input, dict) and isinstance(tool_input.get("command"), str):
        words = tool_input["command"].split()[:2]
        pattern = "^" + _literal(" ".join(words)) + r"(\s|$)" if words else ""
    elif isinstance(tool_input, dict) and isinstance(tool_input.get("file_path"), str):
        pattern = _literal(f'"file_path": {json.dumps(tool_input["file_path"], ensure_ascii=False)}')
    elif tool_input is not None:
        pattern = "^" + _literal(input_text(tool, tool_input)) + "$"
    return {"tool_pattern": _literal(tool), "input_pattern": pattern}


class RuleProposal(forms.Form):
    # The model's own checks (a pattern must compile), so a proposal saves exactly when the admin would save it.
    tool_pattern = forms.CharField(
        max_length=200, validators=ApprovalRule._meta.get_field("tool_pattern").validators, label="Tool (a pattern)"
    )
    input_pattern = forms.CharField(
        max_length=500,
        required=False,
        validators=ApprovalRule._meta.get_field("input_pattern").validators,
        label="Input (searched for; empty: any input)",
    )

    def __init__(self, *args: Any, question: Question, seen: Access, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.question = question
        self.seen = seen

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if self.errors:
            return cleaned
        if not self.compiled().matches(*self._use(self.question)):
            raise forms.ValidationError("This rule would not decide the approval it is made from: widen it.")
        return cleaned

    def rule(self) -> ApprovalRule:
        """The rule as it would be saved: allow, in the approval's project (for every project's agents without one)."""
        return ApprovalRule(
            tool_pattern=self.cleaned_data["tool_pattern"],
            input_pattern=self.cleaned_data["input_pattern"],
            project=self.question.project,
            action=Action.ALLOW,
        )

    def compiled(self) -> CompiledRule:
        return CompiledRule(self.rule())

    @staticmethod
    def _use(question: Question) -> tuple[str, str, str, int | None]:
        tool = str(question.payload.get("tool_name") or "")
        return (
            tool,
            input_text(tool, question.payload.get("tool_input")),
            str(question.payload.get("cwd") or ""),
            (question.project_id),
        )

    def decides(self) -> list[Question]:
        """The waiting approvals this person sees that the rule would decide, this one first."""
        compiled = self.compiled()
        waiting = self.seen.visible(Question.objects.pending().filter(kind=Kind.APPROVAL)).order_by("created_at")
        found = [q for q in waiting if compiled.matches(*self._use(q))]
        return sorted(found, key=lambda q: q.pk != self.question.pk)

    def save_and_allow(self, by_user: Any, remote_addr: str | None) -> tuple[ApprovalRule, list[Question]]:
        """Saves the rule, then allows what it decides now; each answer is its own, the first answer still wins."""
        # The rule alone in a transaction: once saved it decides every later approval, whatever happens to these.
        with transaction.atomic():
            rule = self.rule()
            rule.save()
        allowed = []
        for question in self.decides():
            try:
                question.record_answer({"behavior": "allow"}, by_user=by_user, remote_addr=remote_addr)
            except AlreadyResolved:
                continue
            allowed.append(question)
        return rule, allowed


def may_make_rules(seen: Access, question: Question) -> bool:
    """A rule decides for everyone in its project: its admins make them (a superuser for approvals in none)."""
    return seen.may(question.project_id, Role.ADMIN) if question.project_id is not None else seen.everything
