"""Clifford's request_help: a blocked agent says what it was doing and why it is stuck; a person helps or dismisses."""

from __future__ import annotations

from questions.kinds.one_question import OpenQuestion


class BlockedAgent(OpenQuestion):
    name = "help"
    label = "Blocked agent"
    order = 60
    dismissable = True


KIND = BlockedAgent()
