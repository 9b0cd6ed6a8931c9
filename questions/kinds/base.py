"""What every question kind is made of: its answer form, how an answer is parsed, what the agent gets back.

An answer is parsed once, from the dashboard's form or the JSON API's value, into a
`Reply`: readable text (history, admin, dashboards) and structured data (the tool
result). The form only gathers the fields; the kind's `parse` holds every rule, so
the dashboard and the API refuse the same answers with the same words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from django import forms
from django.conf import settings


class Asked(Protocol):
    """What a kind reads of the question being answered (a questions.models.Question)."""

    kind: str
    text: str
    options: Any
    payload: Any
    allow_free_text: bool

    def option_values(self) -> list[str]: ...


class InvalidAnswer(Exception):
    """An answer that does not fit its question; `field` names the offending input."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Reply:
    text: str  # readable, for people
    data: dict[str, Any] = field(default_factory=dict)  # structured, for the agent
    option: str = ""


def comment(value: Any, field_name: str = "comment") -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidAnswer(field_name, "A comment must be text.")
    value = value.strip()
    if len(value) > settings.HOOKBRIDGE_MAX_ANSWER_LENGTH:
        raise InvalidAnswer(field_name, f"A comment is longer than {settings.HOOKBRIDGE_MAX_ANSWER_LENGTH} characters.")
    return value or None


def free_text(value: Any, field_name: str = "answer") -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidAnswer(field_name, "The answer must be text.")
    text: str = value.strip()
    value = text
    if not value:
        raise InvalidAnswer(field_name, "The answer is empty.")
    if len(value) > settings.HOOKBRIDGE_MAX_ANSWER_LENGTH:
        raise InvalidAnswer(
            field_name, f"The answer is longer than {settings.HOOKBRIDGE_MAX_ANSWER_LENGTH} characters."
        )
    return text


def optional_text() -> forms.CharField:
    # Lengths and emptiness are the kind's to judge (parse), with the API's wording.
    return forms.CharField(required=False, strip=False)


class AnswerForm(forms.Form):
    """The dashboard's answer form for one question; a valid form holds the parsed `reply`.

    Templates read the form's state through properties whose names are not field names:
    `form.answer` in a template would find the field "answer" (templates try form["answer"] first).
    """

    def __init__(
        self, kind: QuestionKind, question: Asked, data: Any = None, preset: dict[str, str] | None = None
    ) -> None:
        super().__init__(data)
        self.kind, self.question = kind, question
        # What a fresh form shows chosen (a mail's per-option link opens the page with that option chosen, unsent).
        self.preset = preset or {}
        self.reply: Reply | None = None
        self.add_fields()

    def add_fields(self) -> None:
        """Add the fields this question's form has (they depend on its options, sub-questions...)."""

    def to_answer(self) -> tuple[Any, Any]:
        """(value, option) for the kind's parse, from the cleaned fields."""
        raise NotImplementedError

    def typed(self, name: str) -> str:
        """What was entered in field `name` (a fresh card: its preset, else empty); a re-rendered card keeps it."""
        return str(self.data.get(name, "")) if self.is_bound else self.preset.get(name, "")

    def problem(self, name: str) -> str:
        """The error attached to field `name`, shown next to it."""
        if not self.is_bound:
            return ""
        messages = self.errors.get(name)
        return str(messages[0]) if messages else ""

    @property
    def general_problem(self) -> str:
        """An error that belongs to no one field (shown under the buttons)."""
        return str(self.non_field_errors()[0]) if self.is_bound and self.non_field_errors() else ""

    def field_for(self, problem: str) -> str | None:
        """The form field an InvalidAnswer's field names, or None for the form as a whole."""
        return problem if problem in self.fields else None

    def clean(self) -> dict[str, Any] | None:
        cleaned = super().clean()
        if self.errors:
            return cleaned
        try:
            self.reply = self.kind.parse(self.question, *self.to_answer())
        except InvalidAnswer as exc:
            self.add_error(self.field_for(exc.field), str(exc))
        return cleaned

    @property
    def error(self) -> str:
        """The first problem, as one sentence for the card."""
        for messages in self.errors.values():
            return str(messages[0])
        return ""


class QuestionKind:
    """One kind of question. Subclasses live in a module of their own, with a template of their own."""

    name: ClassVar[str]  # stored in Question.kind
    label: ClassVar[str]
    order: ClassVar[int]  # where the kind sits in lists (the admin's filter)
    form_class: ClassVar[type[AnswerForm]]
    # Whether a person may decline to answer (the agent is told to go on by its own judgement).
    dismissable: ClassVar[bool] = False
    # Whether an answer may carry images (screenshots) beside its words: kinds answered in free text.
    takes_images: ClassVar[bool] = False

    @property
    def template(self) -> str:
        """Its partials: `badge` (beside the asker), `prompt` (what is asked), `fields` (the answer form's inputs)."""
        return f"questions/kinds/{self.name}.html"

    def form(self, question: Asked, data: Any = None, preset: dict[str, str] | None = None) -> AnswerForm:
        return self.form_class(self, question, data, preset)

    def parse(self, question: Asked, value: Any, option: Any = None) -> Reply:
        """An answer given as a value (the JSON API, the CLI) or gathered by the form."""
        raise NotImplementedError

    def result_text(self, question: Asked, reply_text: str, data: dict[str, Any]) -> str:
        """The readable text content of the tool result."""
        return json.dumps(data, ensure_ascii=False)

    def structured_result(self, question: Asked, data: dict[str, Any]) -> dict[str, Any]:
        """The tool result's structured content."""
        return data

    def elicitation(self, question: Asked) -> dict[str, Any] | None:
        """The form to answer it in the agent's own client (an MCP form elicitation's `requestedSchema`: flat,
        strings, numbers, booleans and enums), or None where only the team's pages answer this kind."""
        return None

    def from_elicitation(self, question: Asked, content: dict[str, Any]) -> Reply:
        """The answer given in that form, parsed by the same rules as every other answer."""
        raise InvalidAnswer("content", f"A {self.label.lower()} is not answered in the agent's client.")


class StructuredKind(QuestionKind):
    """A kind whose answer is a JSON object shaped like its tool result."""

    def parse(self, question: Asked, value: Any, option: Any = None) -> Reply:
        if not isinstance(value, dict):
            raise InvalidAnswer("answer", f"A {self.name} answer must be a JSON object.")
        return self.parse_object(question, value)

    def parse_object(self, question: Asked, value: dict[str, Any]) -> Reply:
        raise NotImplementedError

    def result_text(self, question: Asked, reply_text: str, data: dict[str, Any]) -> str:
        # The answer as a person gave it, then as data: agents read either.
        return f"{reply_text}\n\n{json.dumps(data, ensure_ascii=False)}"
