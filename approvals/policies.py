"""Approval policies: which people must decide an approval no rule decided, and what nobody deciding means.

The first of a project's policies (in order) that matches the approval applies. What it says is written on the
question when it is asked (Question.requirement), so every answer path counts the same votes
(Question.record_answer) and a policy edited later never changes what was already asked.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from approvals import runtime as state
from approvals import shell
from approvals.models import ApprovalPolicy, input_path, path_matches, shell_command
from questions.kinds.approval import destructive
from tokens.models import AgentToken

POLICIES_TTL = 1.0


@dataclass(frozen=True)
class CompiledPolicy:
    pk: int
    project_id: int
    name: str
    host: str
    tool: re.Pattern[str] | None
    prefix: tuple[str, ...] | None
    path: str
    destructive: bool | None
    token_id: int | None
    folder: str
    requirement: dict[str, Any]

    @classmethod
    def of(cls, policy: ApprovalPolicy) -> CompiledPolicy:
        return cls(
            pk=policy.pk or 0,  # 0: a policy read from a file, not saved (policy test)
            project_id=policy.project_id,
            name=policy.name,
            host=policy.host,
            tool=re.compile(policy.tool_pattern) if policy.tool_pattern else None,
            prefix=shell.words_of(policy.command_prefix) if policy.command_prefix else None,
            path=policy.path,
            destructive=policy.destructive,
            token_id=policy.token_id,
            folder=policy.folder.rstrip("/"),
            requirement={
                "policy": f"the policy '{policy.name}'",
                "policy_id": policy.pk,
                "quorum": policy.quorum,
                "self_approval": policy.self_approval,
                "deciders": list(policy.deciders or []),
                "timeout": policy.timeout_seconds,
                "fallback": policy.fallback,
                "escalate": list(policy.escalate or []),
            },
        )

    def matches(self, use: ToolUse) -> bool:
        if self.project_id != use.project_id:
            return False
        if self.host and self.host != use.host:
            return False
        if self.tool is not None and not self.tool.fullmatch(use.tool_name):
            return False
        if self.token_id is not None and self.token_id != use.token_id:
            return False
        if self.folder and not (use.cwd == self.folder or use.cwd.startswith(self.folder + "/")):
            return False
        command = shell_command(use.tool_name, use.tool_input)
        if self.destructive is not None and bool(command and destructive(command)) != self.destructive:
            return False
        if self.prefix is not None:
            # Broad, like a deny rule: any command it would run, or its words as typed when unreadable.
            if command is None:
                return False
            parsed = shell.parse(command, use.cwd)
            if not any(one.starts_with(self.prefix) for one in parsed.commands):
                words = r"\s+".join(re.escape(word) for word in self.prefix)
                if parsed.readable or not re.search(rf"(?<![\w-]){words}(?![\w-])", command):
                    return False
        if self.path:
            found = input_path(use.tool_input)
            if found is None or not path_matches(self.path, found, use.cwd):
                return False
        return True


@dataclass(frozen=True)
class ToolUse:
    project_id: int
    host: str
    tool_name: str
    tool_input: Any
    cwd: str
    token_id: int | None


def policies() -> list[CompiledPolicy]:
    found = state.approval_policies
    if found is None or time.monotonic() - state.approval_policies_read_at > POLICIES_TTL:
        found = [CompiledPolicy.of(p) for p in ApprovalPolicy.objects.all()]
        state.approval_policies, state.approval_policies_read_at = found, time.monotonic()
    return found


def first_match(use: ToolUse, among: list[CompiledPolicy] | None = None) -> CompiledPolicy | None:
    return next((policy for policy in (among if among is not None else policies()) if policy.matches(use)), None)


def requirement(use: ToolUse, token: AgentToken | None) -> dict[str, Any]:
    """What the approval's question must say of who decides ({}: one person who may answer, as always)."""
    policy = first_match(use)
    if policy is None:
        return {}
    owner = token.user if token is not None and token.user_id is not None else None
    return {
        **policy.requirement,
        "owner": owner.pk if owner else None,
        "owner_name": owner.get_username() if owner else "",
    }


def digest(tool_name: str, tool_input: Any, cwd: str) -> str:
    """What a person is shown of an approval, as one value: a decision (a vote, a rule made from it) is for it."""
    canonical = json.dumps([tool_name, tool_input, cwd], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


@receiver([post_save, post_delete], sender=ApprovalPolicy)
def _forget(**kwargs: Any) -> None:
    state.approval_policies = None
