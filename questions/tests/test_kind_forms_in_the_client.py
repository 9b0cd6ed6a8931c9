"""Each kind's form for the agent's own client (an MCP form elicitation, issue 40): what it asks, and how an
answer given there is read by the same rules as every other answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from questions.kinds import InvalidAnswer
from questions.kinds.approval import KIND as APPROVAL
from questions.kinds.choose_next import KIND as CHOOSE_NEXT
from questions.kinds.hypothesis import KIND as HYPOTHESIS
from questions.kinds.multiple_choice import KIND as MULTIPLE_CHOICE
from questions.kinds.one_question import KIND as OPEN
from questions.kinds.question import KIND as QUESTION


@dataclass
class Asked:
    kind: str
    text: str = "Which one?"
    options: list[dict[str, Any]] = field(default_factory=list)
    payload: dict[str, Any] = field(default_factory=dict)
    allow_free_text: bool = True

    def option_values(self) -> list[str]:
        return [str(option["value"]) for option in self.options]


def test_a_question_with_options_offers_them_by_label_beside_an_answer_of_ones_own() -> None:
    asked = Asked("question", options=[{"value": "eu", "label": "Europe"}, {"value": "us", "label": "US"}])
    form = QUESTION.elicitation(asked)
    assert form is not None
    assert form["properties"]["choice"]["oneOf"] == [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "US"}]
    assert form["required"] == []
    assert QUESTION.from_elicitation(asked, {"choice": "us"}).data == {"answer": "us"}
    assert QUESTION.from_elicitation(asked, {"answer": "Asia"}).data == {"answer": "Asia"}
    with pytest.raises(InvalidAnswer) as refused:
        QUESTION.from_elicitation(asked, {"choice": "mars"})
    assert refused.value.field == "choice"


def test_a_question_that_takes_only_its_options_requires_a_choice() -> None:
    asked = Asked("question", options=[{"value": "a", "label": "A"}], allow_free_text=False)
    form = QUESTION.elicitation(asked)
    assert form is not None
    assert form["required"] == ["choice"]
    assert "answer" not in form["properties"]


def test_an_open_question_is_one_required_text() -> None:
    form = OPEN.elicitation(Asked("one-question"))
    assert form == {"type": "object", "properties": {"answer": {"type": "string", "title": "Your answer"}},
                    "required": ["answer"]}  # fmt: skip
    assert OPEN.from_elicitation(Asked("one-question"), {"answer": "yes"}).data == {"answer": "yes"}


def test_choose_next_offers_its_tiles_and_both_actions_as_one_choice() -> None:
    tiles = [{"id": "a", "title": "Ship"}, {"id": "b", "title": "Wait"}]
    asked = Asked("choose-next", payload={"title": "Next?", "description": "", "options": tiles})
    form = CHOOSE_NEXT.elicitation(asked)
    assert form is not None
    assert [entry["const"] for entry in form["properties"]["choice"]["oneOf"]] == [
        "a", "b", "action:aborted", "action:new-ideas"
    ]  # fmt: skip
    chosen = CHOOSE_NEXT.from_elicitation(asked, {"choice": "b", "message": "after lunch"}).data
    assert chosen == {"action": "selected", "selectedOption": {"id": "b", "title": "Wait"}, "message": "after lunch"}
    assert CHOOSE_NEXT.from_elicitation(asked, {"choice": "action:new-ideas"}).data["action"] == "new-ideas"
    with pytest.raises(InvalidAnswer) as refused:
        CHOOSE_NEXT.from_elicitation(asked, {"choice": "zzz"})
    assert refused.value.field == "choice"


def test_multiple_choice_is_a_multi_select_per_question_read_as_its_answer() -> None:
    subs = [{"text": "Editor?", "options": ["vim", "emacs"]}, {"text": "Shell?", "options": ["bash", "zsh"]}]
    asked = Asked("multiple-choice", payload={"questions": subs})
    form = MULTIPLE_CHOICE.elicitation(asked)
    assert form is not None
    assert form["properties"]["q1"] == {"type": "array", "title": "Shell?", "items": {"type": "string",
                                        "enum": ["bash", "zsh"]}}  # fmt: skip
    data = MULTIPLE_CHOICE.from_elicitation(asked, {"q0": ["vim"], "q1_other": "fish"}).data
    assert data["answers"] == [
        {"question": "Editor?", "selections": [{"option": "vim", "comment": None}]},
        {"question": "Shell?", "selections": [], "other": "fish"},
    ]
    with pytest.raises(InvalidAnswer) as refused:
        MULTIPLE_CHOICE.from_elicitation(asked, {"q1": ["csh"]})
    assert refused.value.field == "q1"


def test_hypotheses_are_each_rated_on_the_scale_with_a_comment() -> None:
    asked = Asked("hypothesis", payload={"title": "Slow?", "description": "", "hypotheses": ["Cold cache", "Small"]})
    form = HYPOTHESIS.elicitation(asked)
    assert form is not None
    assert (form["properties"]["h0"]["minimum"], form["properties"]["h0"]["maximum"]) == (1, 7)
    assert form["required"] == ["h0", "h1"]
    ratings = HYPOTHESIS.from_elicitation(asked, {"h0": 6, "h0_comment": "likely", "h1": 2}).data["ratings"]
    assert [(r["agreement"], r["comment"]) for r in ratings] == [(6, "likely"), (2, None)]
    with pytest.raises(InvalidAnswer) as refused:
        HYPOTHESIS.from_elicitation(asked, {"h0": 6, "h1": 9})
    assert refused.value.field == "h1"


def test_an_approval_is_never_offered_in_the_client() -> None:
    assert APPROVAL.elicitation(Asked("approval", payload={"tool_name": "Bash", "tool_input": {}})) is None
