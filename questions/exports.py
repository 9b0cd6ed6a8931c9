"""Exporting question history with its answers, for review outside the admin.

Each row is questions.serializers.question_data, flattened for a spreadsheet.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from typing import Any

from audit import chain
from questions.models import Question
from questions.serializers import question_data

COLUMNS = [
    "id", "kind", "asker", "host", "status", "cancelReason", "question", "createdAt", "resolvedAt", "secondsToAnswer",
    "answer", "answerData", "answeredBy", "answeredAt", "answeredFrom", "session", "project",
]  # fmt: skip


def row(question: Question) -> dict[str, Any]:
    data = question_data(question, audit=True)
    answer = data["answer"] or {}
    return {
        "id": data["id"],
        "kind": data["kind"],
        "asker": data["asker"],
        "host": question.host_title,
        "status": data["status"],
        "cancelReason": data.get("cancelReason", ""),
        "question": data["question"],
        "createdAt": data["createdAt"],
        "resolvedAt": data["resolvedAt"],
        "secondsToAnswer": answer.get("secondsToAnswer"),
        "answer": answer.get("text"),
        "answerData": answer.get("data"),
        "answeredBy": answer.get("answeredBy"),
        "answeredAt": answer.get("answeredAt"),
        "answeredFrom": answer.get("answeredFrom"),
        "session": data["session"],
        "project": question.session.project_name if question.session else None,
    }


def rows(questions: Iterable[Question]) -> list[dict[str, Any]]:
    return [row(question) for question in questions]


def as_json(questions: Iterable[Question]) -> str:
    return json.dumps(rows(questions), indent=2, ensure_ascii=False)


def as_csv(questions: Iterable[Question]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS)
    writer.writeheader()
    for exported in rows(questions):
        writer.writerow(
            {**exported, "answerData": json.dumps(exported["answerData"]) if exported["answerData"] else ""}
        )
    return buffer.getvalue()


def download(questions: Iterable[Question], export: str, where: str, query: str = "") -> str:
    """The questions as `export` (csv or json), with an audit entry saying who took how many, from where."""
    taken = list(questions)
    body = as_csv(taken) if export == "csv" else as_json(taken)
    projects = sorted({question.project.name for question in taken})
    details = {"format": export, "questions": len(taken), "from": where, "filters": query[:1000], "projects": projects}
    chain.record("export.downloaded", target=f"{len(taken)} questions as {export}", details=details)
    return body
