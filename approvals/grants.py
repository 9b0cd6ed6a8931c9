"""Grants: "Allow for this session, N minutes" (issue 53).

A person picks it on an approval's card; the answer carries `grantMinutes` (questions.kinds.approval checks that
the approval may have one), and once it is written the grant is made here, from what the card showed: the tool and
the command's first two words (a compound command's exact commands), or the file. Each later tool use of that
session that a grant covers is allowed at once, unless a deny rule says otherwise or a policy needs more people.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

from django.dispatch import receiver
from django.utils import timezone

from approvals import policies, rules, shell
from approvals.models import Grant, input_path, shell_command
from questions import signals
from questions.kinds import Kind
from questions.kinds.approval import beyond_one_person
from questions.models import Answer, Question

logger = logging.getLogger(__name__)


def make(question: Question, answer: Answer) -> Grant | None:
    """The grant an answer asked for, or None (the answer asked for none, or there is nothing to grant)."""
    minutes = answer.data.get("grantMinutes")
    if question.kind != Kind.APPROVAL or not isinstance(minutes, int) or question.session_id is None:
        return None
    payload = question.payload
    tool = str(payload.get("tool_name") or "")
    command = shell_command(tool, payload.get("tool_input"))
    prefix, path = "", ""
    if command is not None:
        parsed = shell.parse(command, str(payload.get("cwd") or ""))
        if not parsed.readable or len(parsed.commands) != 1:
            logger.info("Approval %s: a compound or unreadable command gets no grant", question.pk)
            return None
        prefix = " ".join(parsed.commands[0].words[:2])
    else:
        path = input_path(payload.get("tool_input")) or ""
    return Grant.objects.create(
        session_id=question.session_id,
        tool_name=tool,
        command_prefix=prefix,
        path=path,
        granted_by=answer.answered_by_user,
        question=question,
        made_from=str(payload.get("digest") or ""),
        expires_at=answer.created_at + timedelta(minutes=minutes),
    )


@receiver(signals.question_resolved)
def granted(sender: Any, question_id: uuid.UUID, answer: Answer | None = None, **kwargs: Any) -> None:
    if answer is None or "grantMinutes" not in answer.data:
        return
    try:
        make(Question.as_resolved(question_id, answer), answer)
    except Exception:
        # The host has its allow; a grant that could not be made only means the next one is asked again.
        logger.exception("Could not make the grant of approval %s", question_id)


def decide(
    session_id: uuid.UUID, tool_name: str, tool_input: Any, cwd: str, use: policies.ToolUse
) -> rules.Ruling | None:
    """What this session's grants (with the team's deny rules) decide; None: they decide nothing."""
    now = timezone.now()
    found = Grant.objects.filter(session_id=session_id, revoked_at__isnull=True, expires_at__gt=now)
    compiled = [grant.compiled() for grant in found.select_related("granted_by")]
    if not compiled:
        return None
    ruling = rules.decide(tool_name, tool_input, cwd, [*rules.rules(), *compiled], use.project_id)
    if ruling is None or ruling.action != "allow" or not any(rule.pk < 0 for rule in ruling.rules):
        return None
    needs = policies.requirement(use, None)
    if needs and beyond_one_person(needs):
        return None  # a grant is one person's: it never decides what a policy gives to more
    return ruling
