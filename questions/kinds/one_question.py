"""Ask-Me's ask-one-question: an open question, answered in free text."""

from __future__ import annotations

from typing import Any

from questions.kinds.base import Asked, QuestionKind, Reply, free_text
from questions.kinds.question import FreeTextForm


class OpenQuestion(QuestionKind):
    name = "one-question"
    label = "Open question"
    order = 20
    form_class = FreeTextForm
    takes_images = True

    def parse(self, question: Asked, value: Any, option: Any = None) -> Reply:
        answer = free_text(value)
        return Reply(answer, {"answer": answer})

    def elicitation(self, question: Asked) -> dict[str, Any] | None:
        answer = {"type": "string", "title": "Your answer"}
        return {"type": "object", "properties": {"answer": answer}, "required": ["answer"]}

    def from_elicitation(self, question: Asked, content: dict[str, Any]) -> Reply:
        return self.parse(question, content.get("answer"))


KIND = OpenQuestion()
