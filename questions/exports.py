"""Exporting question history with its answers, for review outside the admin."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from typing import Any

from questions.models import Question

COLUMNS = [
    "id", "kind", "asker", "status", "cancel_reason", "question", "created_at", "resolved_at", "seconds_to_answer",
    "answer", "answer_data", "answered_by", "answered_at", "answered_from", "session", "project",
]  # fmt: skip


def rows(questions: Iterable[Question]) -> list[dict[str, Any]]:
    out = []
    for question in questions:
        answer = getattr(question, "answer", None) if question.status == "answered" else None
        waited = question.time_to_answer
        out.append(
            {
                "id": str(question.pk),
                "kind": question.kind,
                "asker": question.asker_name,
                "status": question.status,
                "cancel_reason": question.cancel_reason,
                "question": question.text,
                "created_at": question.created_at.isoformat(),
                "resolved_at": question.resolved_at.isoformat() if question.resolved_at else None,
                "seconds_to_answer": round(waited.total_seconds(), 3) if waited else None,
                "answer": answer.text if answer else None,
                "answer_data": answer.data if answer else None,
                "answered_by": answer.answered_by if answer else None,
                "answered_at": answer.created_at.isoformat() if answer else None,
                "answered_from": answer.remote_addr if answer else None,
                "session": str(question.session_id) if question.session_id else None,
                "project": question.session.project if question.session else None,
            }
        )
    return out


def as_json(questions: Iterable[Question]) -> str:
    return json.dumps(rows(questions), indent=2, ensure_ascii=False)


def as_csv(questions: Iterable[Question]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS)
    writer.writeheader()
    for row in rows(questions):
        writer.writerow({**row, "answer_data": json.dumps(row["answer_data"]) if row["answer_data"] else ""})
    return buffer.getvalue()
