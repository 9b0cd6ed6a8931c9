"""The wake-up: the channel-layer message that tells the calls waiting on a question that it changed.

`question_group` is where those calls listen; `wake_up` is the message (its answer riding along,
as committed); `wake_the_waiting_calls` sends it when a question is resolved; `take_answer` is how a
woken call reads it without reading the row.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from django.dispatch import receiver

from core import broadcast
from questions import signals
from questions.models import Answer, Question
from questions.states import Status


def question_group(question_id: uuid.UUID | str) -> str:
    return f"question.{uuid.UUID(str(question_id)).hex}"


def wake_up(answer: Answer | None = None) -> dict[str, Any]:
    """The message that wakes the calls waiting on a question; its answer, if any, rides along as committed.

    The woken call then returns it at once (take_answer) instead of reading the row again: that
    read, on a worker busy rendering the answer for every dashboard, was the largest part of an
    answer's way to the agent (bench/compare.py). Sent only once the answer commits, so it is
    what the row says. Without one (a cancel, a timeout) the call reads the row.
    """
    message: dict[str, Any] = {"type": "question.resolved"}
    if answer is not None:
        message["answered"] = {
            "resolved_at": answer.created_at.isoformat(),
            "text": answer.text,
            "data": answer.data,
            "option": answer.option,
            "answered_by": answer.answered_by,
            "source": answer.source,
            # The images themselves stay in the database: a wake-up stays small, whatever was pasted.
            "image_count": answer.image_count,
        }
    return message


@receiver(signals.question_resolved)
def wake_the_waiting_calls(sender: Any, question_id: uuid.UUID, answer: Answer | None = None, **kwargs: Any) -> None:
    """The first receiver of question_resolved (QuestionsConfig.ready connects it before any other):
    the waiting call is what an agent is blocked on, so it hears before any page is rendered."""
    broadcast.send(question_group(question_id), wake_up(answer))


def take_answer(question: Question, answered: dict[str, Any]) -> None:
    """`question`, read while pending, as answered by what a wake-up carried."""
    resolved_at = datetime.fromisoformat(answered["resolved_at"])
    question.status, question.cancel_reason, question.resolved_at = Status.ANSWERED, "", resolved_at
    question.answer = Answer(
        question=question,
        text=answered["text"],
        data=answered["data"],
        option=answered["option"],
        answered_by=answered["answered_by"],
        source=answered["source"],
        image_count=answered.get("image_count", 0),
        created_at=resolved_at,
    )
