"""Escalation policies: where a question goes, and when, each step only while nobody has answered.

`push@0s,slack@0s,email@10m` reads: a push to the browsers of the people who may answer and Slack at once,
e-mail ten minutes after the question was asked. The default is HOOKBRIDGE_NOTIFY; a project may have its own
(notify.models.NotifyPolicy, edited in the admin).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHANNELS = ("dashboard", "push", "slack", "telegram", "discord", "teams", "email", "webhook")
# The chat platforms: a message with buttons, edited once the question ends.
CHATS = ("slack", "telegram", "discord", "teams")
NAMES = {
    "dashboard": "the dashboard", "push": "push", "slack": "Slack", "telegram": "Telegram", "discord": "Discord",
    "teams": "Teams", "email": "e-mail", "webhook": "the webhook",
}  # fmt: skip
UNITS = {"s": 1, "m": 60, "h": 3600}
STEP = re.compile(r"^(?P<channel>[a-z]+)@(?P<amount>\d+)(?P<unit>[smh])$")


@dataclass(frozen=True)
class Step:
    channel: str
    delay_seconds: int

    def __str__(self) -> str:
        return f"{self.channel}@{self.delay_seconds}s"


def parse(text: str) -> list[Step]:
    """The steps of a policy, in order of time; ValueError naming the step that is wrong."""
    steps = []
    for raw in (part.strip() for part in text.split(",")):
        if not raw:
            continue
        found = STEP.match(raw)
        if found is None:
            raise ValueError(f"{raw!r} is not a step: write channel@delay, such as slack@0s or email@10m")
        if found["channel"] not in CHANNELS:
            raise ValueError(f"{raw!r}: the channel must be one of {', '.join(CHANNELS)}")
        steps.append(Step(found["channel"], int(found["amount"]) * UNITS[found["unit"]]))
    if len({step.channel for step in steps}) != len(steps):
        raise ValueError("each channel may appear once in a policy")
    return sorted(steps, key=lambda step: step.delay_seconds)
