"""A button pressed on a chat platform's message (Telegram, Discord, Teams): whose press it is, and what it decides.

Every platform's press comes here once its request is proven to be the platform's (each view checks its own
secret, signature or token first). A press decides only as the Hook Bridge person whose linked account
(notify.models.ChatAccount) pressed it, and only while they may answer the question's project; on an approval
with a policy it is that person's vote (quorum, no self-approval), as on the dashboard. Whatever it comes to is
said back in one sentence the platform shows to the presser alone where it can.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from core.errors import Refused
from notify.models import ChatAccount, Delivery, Platform, Purpose
from projects import access
from projects.models import Project
from questions.decisions import Decision
from questions.models import AlreadyResolved, InvalidAnswer, NotDecided, Question, VoteCounted

logger = logging.getLogger(__name__)

# What a button carries beside its step: Allow, Deny, or an option's place in the question's list.
ALLOW, DENY = "a", "d"
PAGE = "Notifications"


@dataclass(frozen=True)
class Press:
    platform: str
    step_id: int
    choice: str
    user_id: str  # the platform's id of who pressed
    name: str
    where: str  # the chat, channel or conversation the message is in
    message_id: str


def text_of(value: Any, limit: int = 200) -> str:
    """A platform's string or number as text, cut to `limit`; anything else (a list where an id belongs) is ''."""
    if isinstance(value, bool):
        return ""
    return value[:limit] if isinstance(value, str) else str(value)[:limit] if isinstance(value, int) else ""


def choices(question: Question) -> list[tuple[str, str]]:
    """(label, what its button carries) of the buttons a message of `question` has: Allow and Deny for an approval,
    one per option (the first 20) for a single-choice question, none otherwise (it opens its link instead)."""
    if question.kind == "approval":
        return [("Allow", ALLOW), ("Deny", DENY)]
    if question.kind == "question" and question.options:
        return [(str(option["label"]), str(n)) for n, option in enumerate(question.options[:20])]
    return []


def button_data(step_id: int, choice: str) -> str:
    """What a button carries: `hb:<step>:<choice>`, well inside Telegram's 64 bytes and Discord's 100 characters."""
    return f"hb:{step_id}:{choice}"


def read_button(data: str) -> tuple[int, str]:
    """(step, choice) of a button's data; Refused (400) when it is none of ours."""
    parts = data.split(":")
    if len(parts) != 3 or parts[0] != "hb" or not parts[1].isdigit() or not parts[2] or len(data) > 100:
        raise Refused("not one of this server's answer buttons", 400)
    return int(parts[1]), parts[2]


def step_of(press: Press) -> Delivery:
    """The step whose message was pressed: only a message this server posted on that platform, in that place, for
    that step (a forged button, another chat's message or another step's id is refused, 400)."""
    delivery = (
        Delivery.objects.select_related("question")
        .filter(pk=press.step_id, channel=press.platform, purpose=Purpose.NOTIFY, posted_in=press.where)
        .filter(posted_id=press.message_id)
        .first()
    )
    if delivery is None:
        raise Refused("that message is not one this server posted for that question", 400)
    return delivery


def person_of(question: Question, press: Press) -> object:
    """The person a press answers as; Refused (403, said to the presser) when nobody here may."""
    label = Platform(press.platform).label
    person = ChatAccount.person(press.platform, press.user_id)
    if person is None:
        raise Refused(
            f"Your {label} account is not linked to a Hook Bridge person, so this button cannot answer for you: "
            f"link it on your {PAGE} page in Hook Bridge, or answer on the dashboard.",
            403,
        )
    if not access.of_user(person).may_answer(question.project_id):
        project = Project.objects.filter(pk=question.project_id).values_list("name", flat=True).first()
        raise Refused(f"You may not answer questions of project {project} (it needs the answerer role).", 403)
    return person


def decide(press: Press, remote_addr: str | None = None) -> str:
    """Answer the pressed question as the presser's person; what to tell them. Refused: nothing was decided."""
    delivery = step_of(press)
    question = delivery.question
    person = person_of(question, press)
    label = Platform(press.platform).label
    try:
        if question.kind == "approval":
            if press.choice not in (ALLOW, DENY):
                raise Refused("an approval's button is Allow or Deny", 400)
            allowed = press.choice == ALLOW
            decision = Decision.allow() if allowed else Decision.deny(f"Denied in {label} by {person}.")
            question.record_answer(decision.as_dict(), by_user=person, source=press.platform, remote_addr=remote_addr)
            return "Allowed." if allowed else "Denied."
        offered = {data: label for label, data in choices(question)}
        if press.choice not in offered:
            raise Refused("that button is none of the question's options", 400)
        option = question.options[int(press.choice)]
        question.record_answer(option=str(option["value"]), by_user=person, source=press.platform,
                               remote_addr=remote_addr)  # fmt: skip
        return f"Answered: {offered[press.choice]}."
    except AlreadyResolved as exc:
        return f"Already decided: {exc.question.status_sentence(to_agent=False)}"
    except VoteCounted as exc:
        return str(exc)
    except NotDecided as exc:
        return str(exc)
    except InvalidAnswer as exc:
        raise Refused(f"not an answer that question takes: {exc}", 400) from None


def outcome(question: Question) -> str:
    """How the question ended, in one line for its message once it has (who answered what, or why it ended)."""
    if question.status == "answered":
        return f"Answered by {question.answer.answered_by}: {question.answer.display}"
    return question.status_sentence(to_agent=False)
