"""MAXSIM's ask_question: a question with optional options, answered by choosing one or in free text."""

from __future__ import annotations

from typing import Any

from questions.kinds.base import AnswerForm, Asked, InvalidAnswer, QuestionKind, Reply, free_text, optional_text


class FreeTextForm(AnswerForm):
    def add_fields(self) -> None:
        self.fields["option"] = optional_text()
        self.fields["answer"] = optional_text()

    def to_answer(self) -> tuple[Any, Any]:
        return self.cleaned_data["answer"], self.cleaned_data["option"]

    @property
    def chosen(self) -> str:
        return self.typed("option")

    @property
    def free_text(self) -> dict[str, str]:
        return {"value": self.typed("answer"), "error": self.problem("answer") or self.problem("option")}


class QuestionWithOptions(QuestionKind):
    name = "question"
    label = "Question"
    order = 10
    form_class = FreeTextForm
    takes_images = True

    def parse(self, question: Asked, value: Any, option: Any = None) -> Reply:
        if option not in (None, ""):
            if option not in question.option_values():
                raise InvalidAnswer("option", f"'{option}' is not one of this question's options.")
            return Reply(option, {"answer": option}, option)
        if question.option_values() and (value is None or (isinstance(value, str) and not value.strip())):
            # Sent with nothing chosen and nothing written (issue 39): say what is missing, not "empty".
            raise InvalidAnswer("answer", "Choose one of the options, or write your own answer.")
        answer = free_text(value)
        if answer in question.option_values():
            return Reply(answer, {"answer": answer}, answer)
        if not question.allow_free_text:
            raise InvalidAnswer("answer", "This question only accepts one of its options.")
        return Reply(answer, {"answer": answer})

    def elicitation(self, question: Asked) -> dict[str, Any] | None:
        properties: dict[str, Any] = {}
        options = [{"const": str(o["value"]), "title": str(o.get("label") or o["value"])} for o in question.options]
        if options:
            properties["choice"] = {"type": "string", "title": "Choose one", "oneOf": options}
        if question.allow_free_text or not options:
            title = "Or write your own answer" if options else "Your answer"
            properties["answer"] = {"type": "string", "title": title}
        required = ["answer"] if not options else [] if question.allow_free_text else ["choice"]
        return {"type": "object", "properties": properties, "required": required}

    def from_elicitation(self, question: Asked, content: dict[str, Any]) -> Reply:
        choice = content.get("choice")
        if choice not in (None, ""):
            try:
                return self.parse(question, None, option=choice)
            except InvalidAnswer as exc:
                raise InvalidAnswer("choice", str(exc)) from None
        return self.parse(question, content.get("answer"))


KIND = QuestionWithOptions()
