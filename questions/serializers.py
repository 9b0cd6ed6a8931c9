"""A question as programs see it: the JSON API, the exports, and (later) the event stream share this one shape.

Keys are camelCase, as in the MCP tool results.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from questions.models import Question, Status


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def question_data(question: Question, *, audit: bool = False) -> dict[str, Any]:
    """The question, its state and its answer; `audit` adds what only reviewers see (where an answer came from)."""
    data: dict[str, Any] = {
        "id": str(question.pk),
        "kind": question.kind,
        "question": question.text,
        "options": question.options,
        "payload": question.payload,
        "allowFreeText": question.allow_free_text,
        "asker": question.asker_name,
        "status": question.status,
        "createdAt": _iso(question.created_at),
        "resolvedAt": _iso(question.resolved_at),
        "session": str(question.session_id) if question.session_id else None,
        # Whether a call still waits on it: a question whose agent stopped waiting stays answerable
        # until keptUntil, and the agent's re-ask gets the answer.
        "agentWaiting": question.status == Status.PENDING and question.agent_left_at is None,
    }
    if question.requirement:
        # Who must decide an approval under its policy (issue 53), as the card says it; the asker's owner by name.
        needs = question.requirement
        data["requirement"] = {
            "policy": needs.get("policy"),
            "quorum": int(needs.get("quorum") or 1),
            "selfApproval": bool(needs.get("self_approval", True)),
            "deciders": list(needs.get("deciders") or []),
            "timeout": needs.get("timeout"),
            "fallback": needs.get("fallback"),
            "sentence": question.requirement_sentence,
        }
    if question.agent_left_at is not None:
        data["agentLeftAt"] = _iso(question.agent_left_at)
        data["agentLeftReason"] = question.agent_left_reason
        if question.status == Status.PENDING:
            data["keptUntil"] = _iso(question.kept_until)
    if question.status == Status.CANCELLED:
        data["cancelReason"] = question.cancel_reason
        if question.dismissed_by:
            data["dismissedBy"] = question.dismissed_by
    answer = getattr(question, "answer", None) if question.status == Status.ANSWERED else None
    data["answer"] = None
    if answer is not None:
        waited = question.time_to_answer
        data["answer"] = {
            "text": answer.text,
            "data": answer.data,
            "answeredBy": answer.answered_by,
            "answeredAt": _iso(answer.created_at),
            "secondsToAnswer": round(waited.total_seconds(), 3) if waited else None,
        }
        if audit:
            data["answer"]["answeredFrom"] = answer.remote_addr
    return data
