"""The kinds of question, as a registry: each kind is one module here and one template.

A module in this package that defines `KIND` (a `QuestionKind`) is a kind: its
answer form (a Django Form), how an answer is parsed, and what the agent gets
back. Its template, templates/questions/kinds/<name>.html, holds the partials the
question card includes (`badge`, `prompt`, `fields`). Adding a kind is adding one
module and one template; the card, the answer view, the JSON API and the tool
results all dispatch through `kind_of`.
"""

from __future__ import annotations

import importlib
import pkgutil
from enum import StrEnum

from questions.kinds.base import AnswerForm, Asked, InvalidAnswer, QuestionKind, Reply
from questions.kinds.hypothesis import AGREEMENT_SCALE
from questions.kinds.multiple_choice import DONE_INSTRUCTION, DRILL_DEEPER_INSTRUCTION


def _discover() -> dict[str, QuestionKind]:
    found = []
    for module in pkgutil.iter_modules(__path__):
        kind = getattr(importlib.import_module(f"{__name__}.{module.name}"), "KIND", None)
        if isinstance(kind, QuestionKind):
            found.append(kind)
    return {kind.name: kind for kind in sorted(found, key=lambda kind: kind.order)}


REGISTRY: dict[str, QuestionKind] = _discover()


def kind_of(name: str) -> QuestionKind:
    return REGISTRY[name]


def choices() -> list[tuple[str, str]]:
    """Question.kind's choices (a callable: a new kind needs no migration)."""
    return [(kind.name, kind.label) for kind in REGISTRY.values()]


class Kind(StrEnum):
    """The names the tool sets ask with; questions.checks makes sure each one is registered."""

    QUESTION = "question"
    ONE_QUESTION = "one-question"
    MULTIPLE_CHOICE = "multiple-choice"
    HYPOTHESIS = "hypothesis"
    CHOOSE_NEXT = "choose-next"
    HELP = "help"
    APPROVAL = "approval"


__all__ = [
    "AGREEMENT_SCALE",
    "DONE_INSTRUCTION",
    "DRILL_DEEPER_INSTRUCTION",
    "REGISTRY",
    "AnswerForm",
    "Asked",
    "InvalidAnswer",
    "Kind",
    "QuestionKind",
    "Reply",
    "choices",
    "kind_of",
]
