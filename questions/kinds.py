"""What each kind of question accepts as an answer, and what the agent gets back.

A reply is parsed once, from the dashboard's form or the JSON API's value, into
a `Reply`: readable text (history, admin, dashboards) and structured data (the
tool result). The tools in mcpapi only build questions and hand results back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.http import QueryDict

if TYPE_CHECKING:
    from questions.models import Question

AGREEMENT_SCALE = [
    (1, "Fully disagree"),
    (2, "Disagree"),
    (3, "Somewhat disagree"),
    (4, "Neutral"),
    (5, "Somewhat agree"),
    (6, "Agree"),
    (7, "Fully agree"),
]
AGREEMENT_LABELS = dict(AGREEMENT_SCALE)

DONE_INSTRUCTION = "Do not ask additional questions. Proceed with implementation based on the answers provided."
DRILL_DEEPER_INSTRUCTION = (
    "Ask follow-up questions to get more detailed information. Use ask-one-question for open-ended "
    "follow-ups or ask-multiple-choice for more structured options."
)
COMPLETION_INSTRUCTIONS = {"done": DONE_INSTRUCTION, "drill-deeper": DRILL_DEEPER_INSTRUCTION}


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


def _comment(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidAnswer("comment", "A comment must be text.")
    value = value.strip()
    if len(value) > settings.HOOKBRIDGE_MAX_ANSWER_LENGTH:
        raise InvalidAnswer("comment", f"A comment is longer than {settings.HOOKBRIDGE_MAX_ANSWER_LENGTH} characters.")
    return value or None


def _free_text(value: Any, field_name: str = "answer") -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidAnswer(field_name, "The answer must be text.")
    value = value.strip()
    if not value:
        raise InvalidAnswer(field_name, "The answer is empty.")
    if len(value) > settings.HOOKBRIDGE_MAX_ANSWER_LENGTH:
        raise InvalidAnswer(
            field_name, f"The answer is longer than {settings.HOOKBRIDGE_MAX_ANSWER_LENGTH} characters."
        )
    return value


# --- question (maxsim ask_question) and the free-text kinds -----------------------------------


def _question_reply(question: Question, text: Any, option: Any) -> Reply:
    if option not in (None, ""):
        if option not in question.option_values():
            raise InvalidAnswer("option", f"'{option}' is not one of this question's options.")
        return Reply(option, {"answer": option}, option)
    answer = _free_text(text)
    if answer in question.option_values():
        return Reply(answer, {"answer": answer}, answer)
    if not question.allow_free_text:
        raise InvalidAnswer("answer", "This question only accepts one of its options.")
    return Reply(answer, {"answer": answer})


# --- multiple-choice ------------------------------------------------------------------------


def _multiple_choice_reply(question: Question, value: dict[str, Any]) -> Reply:
    status = value.get("completionStatus")
    if status not in COMPLETION_INSTRUCTIONS:
        raise InvalidAnswer("completionStatus", "completionStatus must be 'done' or 'drill-deeper'.")
    given = value.get("answers")
    asked = question.payload["questions"]
    if not isinstance(given, list) or len(given) != len(asked):
        raise InvalidAnswer("answers", f"answers must be a list with one entry per question ({len(asked)}).")
    answers, lines, chosen_total = [], [], 0
    for index, (sub, entry) in enumerate(zip(asked, given, strict=True)):
        selections = entry.get("selections") if isinstance(entry, dict) else None
        if not isinstance(selections, list):
            raise InvalidAnswer(f"answers[{index}].selections", "selections must be a list.")
        picked = []
        for selection in selections:
            option = selection.get("option") if isinstance(selection, dict) else None
            if option not in sub["options"]:
                raise InvalidAnswer(
                    f"answers[{index}].selections", f"{option!r} is not an option of question {index + 1}."
                )
            picked.append({"option": option, "comment": _comment(selection.get("comment"))})
        chosen_total += len(picked)
        answers.append({"question": sub["text"], "selections": picked})
        shown = "; ".join(f"{p['option']} ({p['comment']})" if p["comment"] else str(p["option"]) for p in picked)
        lines.append(f"{sub['text']}: {shown or 'no selection'}")
    if chosen_total == 0:
        raise InvalidAnswer("answers", "Select at least one option.")
    lines.append("Done answering." if status == "done" else "Asked for more questions.")
    data = {"completionStatus": status, "answers": answers, "instruction": COMPLETION_INSTRUCTIONS[status]}
    return Reply("\n".join(lines), data)


def _multiple_choice_form(question: Question, post: QueryDict) -> dict[str, Any]:
    answers = []
    for i, sub in enumerate(question.payload["questions"]):
        selections = []
        for j, option in enumerate(sub["options"]):
            if post.get(f"q{i}-o{j}"):
                selections.append({"option": option, "comment": post.get(f"q{i}-o{j}-comment", "")})
        answers.append({"selections": selections})
    return {"completionStatus": post.get("completionStatus"), "answers": answers}


# --- hypothesis -----------------------------------------------------------------------------


def _hypothesis_reply(question: Question, value: dict[str, Any]) -> Reply:
    given = value.get("ratings")
    hypotheses = question.payload["hypotheses"]
    if not isinstance(given, list) or len(given) != len(hypotheses):
        raise InvalidAnswer("ratings", f"Rate every hypothesis ({len(hypotheses)}).")
    ratings, lines = [], []
    for index, (hypothesis, entry) in enumerate(zip(hypotheses, given, strict=True)):
        agreement = entry.get("agreement") if isinstance(entry, dict) else None
        if isinstance(agreement, str) and agreement.isdigit():
            agreement = int(agreement)
        if agreement not in AGREEMENT_LABELS:
            raise InvalidAnswer(f"ratings[{index}]", f"Rate hypothesis {index + 1} on the scale from 1 to 7.")
        comment = _comment(entry.get("comment"))
        label = AGREEMENT_LABELS[agreement]
        ratings.append({"hypothesis": hypothesis, "agreement": agreement, "label": label, "comment": comment})
        lines.append(f"{hypothesis}: {label}" + (f" ({comment})" if comment else ""))
    return Reply("\n".join(lines), {"ratings": ratings})


def _hypothesis_form(question: Question, post: QueryDict) -> dict[str, Any]:
    return {
        "ratings": [
            {"agreement": post.get(f"h{i}"), "comment": post.get(f"h{i}-comment", "")}
            for i in range(len(question.payload["hypotheses"]))
        ]
    }


# --- choose-next ----------------------------------------------------------------------------


def _choose_next_reply(question: Question, value: dict[str, Any]) -> Reply:
    action = value.get("action")
    message = _comment(value.get("message"))
    options = {option["id"]: option for option in question.payload["options"]}
    if action == "selected":
        chosen = options.get(str(value.get("optionId")))
        if chosen is None:
            raise InvalidAnswer("optionId", "Choose one of the offered options.")
        selected = {"id": chosen["id"], "title": chosen["title"]}
        data = {"action": "selected", "selectedOption": selected, "message": message}
        text = f"Chose: {chosen['title']}" + (f" ({message})" if message else "")
        return Reply(text, data, chosen["id"])
    if action == "aborted":
        text = "Rejected all options" + (f" ({message})" if message else "")
        return Reply(text, {"action": "aborted", "selectedOption": None, "message": message})
    if action == "new-ideas":
        text = "Asked for new ideas" + (f" ({message})" if message else "")
        return Reply(text, {"action": "new-ideas", "selectedOption": None, "message": message})
    raise InvalidAnswer("action", "action must be 'selected', 'aborted' or 'new-ideas'.")


def _choose_next_form(question: Question, post: QueryDict) -> dict[str, Any]:
    choice = post.get("choice")
    if choice:
        return {"action": "selected", "optionId": choice, "message": post.get("message", "")}
    return {"action": post.get("action"), "message": post.get("message", "")}


STRUCTURED = {
    "multiple-choice": (_multiple_choice_reply, _multiple_choice_form),
    "hypothesis": (_hypothesis_reply, _hypothesis_form),
    "choose-next": (_choose_next_reply, _choose_next_form),
}


def reply_from_form(question: Question, post: QueryDict) -> Reply:
    """Parse the dashboard's answer form for this question's kind."""
    if question.kind in STRUCTURED:
        parse, read_form = STRUCTURED[question.kind]
        return parse(question, read_form(question, post))
    return reply_from_value(question, post.get("answer"), option=post.get("option"))


def reply_from_value(question: Question, value: Any, option: Any = None) -> Reply:
    """Parse an answer given as a value: text for the simple kinds, an object for the structured ones."""
    if question.kind in STRUCTURED:
        if not isinstance(value, dict):
            raise InvalidAnswer("answer", f"A {question.kind} answer must be a JSON object.")
        return STRUCTURED[question.kind][0](question, value)
    if question.kind == "question":
        return _question_reply(question, value, option)
    answer = _free_text(value)
    return Reply(answer, {"answer": answer})


def result_text(question: Question, data: dict[str, Any]) -> str:
    """The readable text content of a tool result."""
    if question.kind == "multiple-choice":
        return f"{question.answer.text}\n\n{data['instruction']}\n\n{json.dumps(data, ensure_ascii=False)}"
    if question.kind in ("hypothesis", "choose-next"):
        return f"{question.answer.text}\n\n{json.dumps(data, ensure_ascii=False)}"
    return json.dumps(data, ensure_ascii=False)
