"""Question kinds are a registry: one module and one template each; the card, forms and results dispatch on it."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from questions import checks, kinds
from questions.kinds.base import QuestionKind, Reply
from questions.kinds.question import FreeTextForm
from questions.models import Kind, Question


def test_it_registers_every_kind_the_tools_ask_with() -> None:
    assert set(kinds.REGISTRY) == {str(kind) for kind in Kind}
    assert kinds.choices()[0] == ("question", "Question")
    assert checks.kinds_are_complete() == []


def test_the_check_names_a_kind_without_its_template(monkeypatch: pytest.MonkeyPatch) -> None:
    class Unfinished(QuestionKind):
        name = "unfinished"
        label = "Unfinished"
        order = 99
        form_class: ClassVar[type[FreeTextForm]] = FreeTextForm

        def parse(self, question: Any, value: Any, option: Any = None) -> Reply:
            return Reply(str(value))

    monkeypatch.setitem(kinds.REGISTRY, "unfinished", Unfinished())
    errors = checks.kinds_are_complete()
    assert [error.id for error in errors] == ["questions.E002"]
    assert "questions/kinds/unfinished.html" in errors[0].msg


@pytest.mark.django_db
def test_a_form_error_names_the_field_at_fault() -> None:
    question, _ = Question.ask(
        asker=None, asker_name="a", text="Rate", options=[], kind=Kind.HYPOTHESIS,
        payload={"title": "T", "description": "", "hypotheses": ["one", "two"]},
    )  # fmt: skip
    form = question.kind_spec.form(question, {"h0": "5", "h1-comment": "kept"})
    assert not form.is_valid()
    assert form.errors["h1"] == ["Rate hypothesis 2 on the scale from 1 to 7."]
    assert form.error == "Rate hypothesis 2 on the scale from 1 to 7."


@pytest.mark.django_db
def test_a_valid_form_holds_the_same_reply_as_the_api_would_build() -> None:
    question, _ = Question.ask(
        asker=None, asker_name="a", text="Next?", options=[], kind=Kind.CHOOSE_NEXT,
        payload={"title": "T", "description": "", "options": [{"id": "a", "title": "A", "description": ""}]},
    )  # fmt: skip
    form = question.kind_spec.form(question, {"choice": "a", "message": " go "})
    assert form.is_valid(), form.errors
    assert form.reply == question.kind_spec.parse(question, {"action": "selected", "optionId": "a", "message": "go"})
