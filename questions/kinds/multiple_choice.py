"""Ask-Me's ask-multiple-choice: sub-questions with options to tick, each with an optional comment."""

from __future__ import annotations

import json
from typing import Any

from questions.kinds.base import AnswerForm, Asked, InvalidAnswer, Reply, StructuredKind, comment, optional_text

DONE_INSTRUCTION = "Do not ask additional questions. Proceed with implementation based on the answers provided."
DRILL_DEEPER_INSTRUCTION = (
    "Ask follow-up questions to get more detailed information. Use ask-one-question for open-ended "
    "follow-ups or ask-multiple-choice for more structured options."
)
COMPLETION_INSTRUCTIONS = {"done": DONE_INSTRUCTION, "drill-deeper": DRILL_DEEPER_INSTRUCTION}


class MultipleChoiceForm(AnswerForm):
    """q<i>-o<j>: option j of sub-question i ticked; q<i>-o<j>-comment: its comment; which button sent it."""

    def add_fields(self) -> None:
        for i, sub in enumerate(self.question.payload["questions"]):
            for j, _option in enumerate(sub["options"]):
                self.fields[f"q{i}-o{j}"] = optional_text()
                self.fields[f"q{i}-o{j}-comment"] = optional_text()
            self.fields[f"q{i}-other"] = optional_text()
        self.fields["completionStatus"] = optional_text()

    def groups(self) -> list[dict[str, Any]]:
        """Each sub-question with its options: field names, and what was ticked and typed."""
        return [
            {
                "text": sub["text"],
                "options": [
                    {
                        "label": option,
                        "name": f"q{i}-o{j}",
                        "checked": bool(self.typed(f"q{i}-o{j}")),
                        "comment": self.typed(f"q{i}-o{j}-comment"),
                    }
                    for j, option in enumerate(sub["options"])
                ],
                "other_name": f"q{i}-other",
                "other": self.typed(f"q{i}-other"),
            }
            for i, sub in enumerate(self.question.payload["questions"])
        ]

    def field_for(self, problem: str) -> str | None:
        # Every problem here concerns the whole set of ticks (none ticked, which button): shown for the form.
        return None

    def to_answer(self) -> tuple[Any, Any]:
        answers = []
        for i, sub in enumerate(self.question.payload["questions"]):
            selections = [
                {"option": option, "comment": self.cleaned_data[f"q{i}-o{j}-comment"]}
                for j, option in enumerate(sub["options"])
                if self.cleaned_data[f"q{i}-o{j}"]
            ]
            answers.append({"selections": selections, "other": self.cleaned_data[f"q{i}-other"]})
        return {"completionStatus": self.cleaned_data["completionStatus"] or None, "answers": answers}, None


class MultipleChoice(StructuredKind):
    name = "multiple-choice"
    label = "Multiple choice"
    order = 30
    form_class = MultipleChoiceForm

    def parse_object(self, question: Asked, value: dict[str, Any]) -> Reply:
        # Optional in Ask-Me's answers: an answer that says nothing more is done.
        status = value.get("completionStatus") or "done"
        if status not in COMPLETION_INSTRUCTIONS:
            raise InvalidAnswer("completionStatus", "completionStatus must be 'done' or 'drill-deeper' (or left out).")
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
                picked.append({"option": option, "comment": comment(selection.get("comment"))})
            answer: dict[str, Any] = {"question": sub["text"], "selections": picked}
            shown = [f"{p['option']} ({p['comment']})" if p["comment"] else str(p["option"]) for p in picked]
            # An answer of the person's own, beside the options: only in the result when given.
            other = comment(entry.get("other"), f"answers[{index}].other")
            if other:
                answer["other"] = other
                shown.append(f"Other: {other}")
            chosen_total += len(shown)
            answers.append(answer)
            lines.append(f"{sub['text']}: {'; '.join(shown) or 'no selection'}")
        if chosen_total == 0:
            raise InvalidAnswer("answers", "Select at least one option.")
        lines.append("Done answering." if status == "done" else "Asked for more questions.")
        data = {"completionStatus": status, "answers": answers, "instruction": COMPLETION_INSTRUCTIONS[status]}
        return Reply("\n".join(lines), data)

    def result_text(self, question: Asked, reply_text: str, data: dict[str, Any]) -> str:
        return f"{reply_text}\n\n{data['instruction']}\n\n{json.dumps(data, ensure_ascii=False)}"

    # In the agent's client: each sub-question as a multi-select of its options, with an answer of one's own.
    def elicitation(self, question: Asked) -> dict[str, Any] | None:
        properties: dict[str, Any] = {}
        for index, sub in enumerate(question.payload["questions"]):
            choices = {"type": "string", "enum": [str(option) for option in sub["options"]]}
            properties[f"q{index}"] = {"type": "array", "title": str(sub["text"]), "items": choices}
            properties[f"q{index}_other"] = {"type": "string", "title": f"Other: {sub['text']}"}
        return {"type": "object", "properties": properties, "required": []}

    def from_elicitation(self, question: Asked, content: dict[str, Any]) -> Reply:
        answers = []
        for index in range(len(question.payload["questions"])):
            chosen = content.get(f"q{index}") or []
            if not isinstance(chosen, list):
                raise InvalidAnswer(f"q{index}", "a list of the question's options")
            answers.append(
                {"selections": [{"option": option} for option in chosen], "other": content.get(f"q{index}_other")}
            )
        try:
            return self.parse_object(question, {"answers": answers})
        except InvalidAnswer as exc:
            # answers[1].selections is the form's q1; "answers" (nothing chosen) is the whole form.
            field = exc.field
            if field.startswith("answers[") and "]" in field:
                field = "q" + field[len("answers[") : field.index("]")]
            raise InvalidAnswer(field, str(exc)) from None


KIND = MultipleChoice()
