"""Ask-Me's challenge-hypothesis: statements a person rates on a 7-step agreement scale, with comments."""

from __future__ import annotations

from typing import Any

from questions.kinds.base import AnswerForm, Asked, InvalidAnswer, Reply, StructuredKind, comment, optional_text

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


class HypothesisForm(AnswerForm):
    """h<i>: the rating of hypothesis i; h<i>-comment: its comment."""

    def add_fields(self) -> None:
        for i in range(len(self.question.payload["hypotheses"])):
            self.fields[f"h{i}"] = optional_text()
            self.fields[f"h{i}-comment"] = optional_text()

    def rows(self) -> list[dict[str, Any]]:
        """Each hypothesis with its field names, the rating and comment entered, and its error."""
        return [
            {
                "hypothesis": hypothesis,
                "name": f"h{i}",
                "rating": self.typed(f"h{i}"),
                "comment": self.typed(f"h{i}-comment"),
                "error": self.problem(f"h{i}"),
                "scale": [(str(value), label) for value, label in AGREEMENT_SCALE],
            }
            for i, hypothesis in enumerate(self.question.payload["hypotheses"])
        ]

    def to_answer(self) -> tuple[Any, Any]:
        count = len(self.question.payload["hypotheses"])
        ratings = [
            {"agreement": self.cleaned_data[f"h{i}"] or None, "comment": self.cleaned_data[f"h{i}-comment"]}
            for i in range(count)
        ]
        return {"ratings": ratings}, None

    def field_for(self, problem: str) -> str | None:
        # ratings[2] is the rating of hypothesis 2: its radio buttons, h2.
        if problem.startswith("ratings[") and problem.endswith("]"):
            candidate = "h" + problem[len("ratings[") : -1]
            return candidate if candidate in self.fields else None
        return None  # a comment too long, the list itself: shown for the form


class Hypothesis(StructuredKind):
    name = "hypothesis"
    label = "Hypotheses to rate"
    order = 40
    form_class = HypothesisForm
    scale = AGREEMENT_SCALE

    def parse_object(self, question: Asked, value: dict[str, Any]) -> Reply:
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
            note = comment(entry.get("comment"))
            label = AGREEMENT_LABELS[agreement]
            ratings.append({"hypothesis": hypothesis, "agreement": agreement, "label": label, "comment": note})
            lines.append(f"{hypothesis}: {label}" + (f" ({note})" if note else ""))
        return Reply("\n".join(lines), {"ratings": ratings})

    # In the agent's client: each hypothesis rated on the scale (an integer), with an optional comment.
    def elicitation(self, question: Asked) -> dict[str, Any] | None:
        properties: dict[str, Any] = {}
        for index, hypothesis in enumerate(question.payload["hypotheses"]):
            scale = ", ".join(f"{value} {label}" for value, label in AGREEMENT_LABELS.items())
            properties[f"h{index}"] = {
                "type": "integer",
                "title": str(hypothesis),
                "description": scale,
                "minimum": min(AGREEMENT_LABELS),
                "maximum": max(AGREEMENT_LABELS),
            }
            properties[f"h{index}_comment"] = {"type": "string", "title": f"Comment on: {hypothesis}"}
        required = [f"h{index}" for index in range(len(question.payload["hypotheses"]))]
        return {"type": "object", "properties": properties, "required": required}

    def from_elicitation(self, question: Asked, content: dict[str, Any]) -> Reply:
        hypotheses = question.payload["hypotheses"]
        ratings = [
            {"agreement": content.get(f"h{index}"), "comment": content.get(f"h{index}_comment")}
            for index in range(len(hypotheses))
        ]
        try:
            return self.parse_object(question, {"ratings": ratings})
        except InvalidAnswer as exc:
            # ratings[2] is the form's h2.
            field = exc.field
            if field.startswith("ratings[") and field.endswith("]"):
                field = "h" + field[len("ratings[") : -1]
            raise InvalidAnswer(field, str(exc)) from None


KIND = Hypothesis()
