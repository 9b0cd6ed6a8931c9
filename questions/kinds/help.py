"""Clifford's request_help: a blocked agent says what it was doing and why it is stuck; a person helps or dismisses."""

from __future__ import annotations

from typing import Any

from questions.kinds.base import Asked
from questions.kinds.one_question import OpenQuestion


class BlockedAgent(OpenQuestion):
    name = "help"
    label = "Blocked agent"
    order = 60
    dismissable = True

    def result_text(self, question: Asked, reply_text: str, data: dict[str, Any]) -> str:
        # Clifford handed the agent the reply itself; the structured content keeps {"answer": ...}.
        return reply_text


KIND = BlockedAgent()
