"""The words told about a question: to people (the dashboard, the API, history) and to the agent that asked.

Kept apart from the model so the wording can be read, and changed, in one place.
"""

from __future__ import annotations

from typing import Any, Protocol

from projects.models import on_call_name, on_call_now
from questions.states import CancelReason, Status


class Question(Protocol):
    """What the words read of a question (questions.models.Question): the model is not imported, it imports this."""

    pk: Any
    project_id: Any
    kind: str
    status: str
    cancel_reason: str
    dismissed_by: str
    agent_left_reason: str
    requirement: dict[str, Any]

    def get_cancel_reason_display(self) -> str: ...


def answerer(question: Question) -> str:
    answer = getattr(question, "answer", None)
    return answer.answered_by if answer else "someone"


# Where an answer was given (Answer.source), as the agent reads it: "Answered by alice on the dashboard at 14:52".
SOURCES: dict[str, str] = {
    "dashboard": "on the dashboard",
    "slack": "in Slack",
    "telegram": "in Telegram",
    "discord": "in Discord",
    "teams": "in Microsoft Teams",
    "push": "from a notification",
    "link": "through a signed link",
    "api": "through the JSON API",
    "terminal": "from a terminal",
    "rule": "by a team rule",
    "policy": "by the team's policy, when nobody decided in time",
    "client": "in the agent's own client",
}


def seconds(value: float) -> str:
    """A policy's time as people say it: "3 s", "30 min"."""
    if value >= 60 and value % 60 == 0:
        return f"{int(value // 60)} min"
    return f"{value:g} s"


def answered_how(question: Question, when: str) -> str:
    """Who answered, where and when (`when`: the time as the reader's clock shows it), for a task's result."""
    answer = getattr(question, "answer", None)
    if answer is None:
        return ""
    return f"Answered by {answer.answered_by} {answer.where} at {when}."


# The history's badge of each outcome (issue 39: a denied approval wore a green "Answered"): its CSS key, its words.
BADGES: dict[str, tuple[str, str]] = {
    CancelReason.DISMISSED: ("dismissed", "Dismissed"),
    CancelReason.HOST_DECIDED: ("host_decided", "Host stopped waiting"),
    CancelReason.SERVER_RESTARTED: ("host_decided", "Server restarted"),
    CancelReason.AGENT_GONE: ("agent_gone", "Withdrawn"),
    CancelReason.CLIENT_CANCELLED: ("client_cancelled", "Aborted at the agent"),
    CancelReason.CLIENT_DISCONNECTED: ("client_disconnected", "Agent disconnected"),
}


def outcome_badge(question: Question) -> tuple[str, str]:
    """What the question came to, as a badge: ("denied", "Denied"), ("answered", "Answered"), ("timed_out", …)."""
    if question.status == Status.ANSWERED:
        answer = getattr(question, "answer", None)
        decided = answer.data.get("behavior") if answer is not None and isinstance(answer.data, dict) else None
        if question.kind == "approval" and decided in ("allow", "deny"):
            return ("allowed", "Allowed") if decided == "allow" else ("denied", "Denied")
        return ("answered", "Answered")
    if question.status == Status.TIMED_OUT:
        return ("timed_out", "Timed out")
    return BADGES.get(question.cancel_reason, ("cancelled", "Cancelled"))


def outcome_words(question: Question) -> str:
    """What became of the question, for people: "was answered by alice", "timed out without an answer"."""
    if question.status == Status.ANSWERED:
        return f"was answered by {answerer(question)}"
    if question.status == Status.TIMED_OUT:
        return "timed out without an answer"
    if question.cancel_reason == CancelReason.DISMISSED:
        return f"was dismissed by {question.dismissed_by or 'a person'}"
    if question.cancel_reason == CancelReason.HOST_DECIDED:
        # Only what the server saw: a tool that ran was decided at the host's prompt; a closed request may
        # have been a decision, an Esc or the host's own timeout, and is not called a decision.
        why = question.agent_left_reason or "decided at the terminal, Esc, or its timeout"
        return f"was left to its host, which stopped waiting ({why})"
    if question.cancel_reason == CancelReason.SERVER_RESTARTED:
        return "was decided by nobody: the server restarted while its host waited, and the host asked at its own prompt"
    if question.cancel_reason == CancelReason.AGENT_GONE:
        return "was withdrawn: its agent stopped waiting and did not ask again"
    if question.status == Status.CANCELLED:
        return f"was cancelled ({question.get_cancel_reason_display().lower()})"
    return "is pending"


def status_sentence(question: Question, *, to_agent: bool) -> str:
    """The question's state in one sentence; `to_agent`: worded for the agent that asked, saying what to do."""
    qid = question.pk
    if to_agent and question.cancel_reason == CancelReason.DISMISSED:
        return (
            f"Your request was dismissed by {question.dismissed_by or 'a person'} without an answer. "
            "Do not wait for help on it: proceed on your own judgement."
        )
    if to_agent and question.status == Status.TIMED_OUT:
        return f"No answer came in time: question {qid} timed out. Proceed on your own judgement."
    if to_agent and question.status == Status.CANCELLED:
        return f"Question {qid} was cancelled ({question.get_cancel_reason_display().lower()})."
    if question.status == Status.ANSWERED:
        return f"Question {qid} was already answered by {answerer(question)}."
    return f"Question {qid} {outcome_words(question)}."


def decider_words(question: Question, decider: str) -> str:
    """A policy's decider as the card says it: "the project's admin", "the on-call of backend (ann now)"."""
    if decider.startswith("role:"):
        return f"the project's {decider[5:]}"
    if (schedule := on_call_name(decider)) is not None:
        now = on_call_now(question.project_id, schedule)
        return f"the on-call of {schedule} ({now.get_username() if now is not None else 'nobody'} now)"
    return decider


def requirement_sentence(question: Question) -> str:
    """Who must decide an approval under its policy, in one sentence for its card."""
    needs = question.requirement
    quorum = int(needs.get("quorum") or 1)
    policy = str(needs.get("policy") or "a policy")
    said = f"{policy[:1].upper()}{policy[1:]} needs {quorum} {'person' if quorum == 1 else 'people'}"
    deciders = needs.get("deciders") or []
    if deciders:
        said += " from " + ", ".join(decider_words(question, str(d)) for d in deciders)
    said += " to allow it"
    if not needs.get("self_approval", True) and needs.get("owner_name"):
        said += f", not {needs['owner_name']}, whose agent asks"
    if needs.get("timeout"):
        fallback = {"allow": "it is allowed", "host": "the agent's host asks"}.get(str(needs.get("fallback")), "denied")
        said += f"; if nobody decides within {seconds(float(needs['timeout']))}, {fallback}"
    return said + "."
