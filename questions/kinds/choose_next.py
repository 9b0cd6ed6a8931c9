"""Ask-Me's choose-next: option tiles to pick one from, or reject them all, or ask for new ideas; with a message."""

from __future__ import annotations

from typing import Any, ClassVar

from questions.kinds.base import AnswerForm, Asked, InvalidAnswer, Reply, StructuredKind, comment, optional_text


class ChooseNextForm(AnswerForm):
    """choice: the tile clicked; action: the other buttons; message: the optional message."""

    def add_fields(self) -> None:
        self.fields["choice"] = optional_text()
        self.fields["action"] = optional_text()
        self.fields["message"] = optional_text()

    @property
    def chosen(self) -> str:
        return self.typed("choice")

    @property
    def chosen_action(self) -> str:
        return self.typed("action")

    @property
    def message_box(self) -> dict[str, str]:
        return {"value": self.typed("message"), "error": self.problem("message") or self.problem("choice")}

    def clean(self) -> dict[str, Any] | None:
        if not self.data.get("choice") and not self.data.get("action"):
            self.add_error(None, "Choose an option, or reject them all, or ask for new ideas; then Send.")
            return self.cleaned_data
        return super().clean()

    def to_answer(self) -> tuple[Any, Any]:
        data = self.cleaned_data
        if data["choice"]:
            return {"action": "selected", "optionId": data["choice"], "message": data["message"]}, None
        return {"action": data["action"] or None, "message": data["message"]}, None

    def field_for(self, problem: str) -> str | None:
        return {"optionId": "choice", "comment": "message"}.get(problem, super().field_for(problem))


class ChooseNext(StructuredKind):
    name = "choose-next"
    label = "Choose what comes next"
    order = 50
    form_class = ChooseNextForm

    def parse_object(self, question: Asked, value: dict[str, Any]) -> Reply:
        action = value.get("action")
        message = comment(value.get("message"))
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

    # In the agent's client: one choice among the tiles and the two actions, and the optional message.
    ACTIONS: ClassVar[dict[str, str]] = {"aborted": "Reject all options", "new-ideas": "Ask for new ideas"}

    def elicitation(self, question: Asked) -> dict[str, Any] | None:
        tiles = [{"const": str(o["id"]), "title": str(o["title"])} for o in question.payload["options"]]
        actions = [{"const": f"action:{name}", "title": title} for name, title in self.ACTIONS.items()]
        properties = {
            "choice": {"type": "string", "title": "Choose", "oneOf": tiles + actions},
            "message": {"type": "string", "title": "Message (optional)"},
        }
        return {"type": "object", "properties": properties, "required": ["choice"]}

    def from_elicitation(self, question: Asked, content: dict[str, Any]) -> Reply:
        choice = str(content.get("choice") or "")
        if choice.startswith("action:"):
            return self.parse_object(question, {"action": choice.removeprefix("action:"), **_message(content)})
        try:
            return self.parse_object(question, {"action": "selected", "optionId": choice, **_message(content)})
        except InvalidAnswer as exc:
            raise InvalidAnswer("choice", str(exc)) from None


def _message(content: dict[str, Any]) -> dict[str, Any]:
    return {"message": content["message"]} if content.get("message") not in (None, "") else {}


KIND = ChooseNext()
