"""The JSON event stream for programs (/ws/events/): what a bot or a custom frontend watches.

Every message is a JSON object with `type` and `timestamp` (ISO 8601, when the server sent
it), and the ids the JSON API takes: `questionId` for POST /api/mcp-answer and
/api/questions/<id>/dismiss, `session` for GET /api/sessions/<guid>. The catalogue is in
the README ("For programs"). Questions are in the JSON API's shape (questions.serializers).

On connect: `questions-queued` (every pending question) and one `lifecycle` per agent at work.
The receivers below turn the questions' and lifecycle's signals into the rest.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.conf import settings
from django.dispatch import receiver
from django.utils import timezone

from core import broadcast
from core.limits import fit, size_of, with_list
from lifecycle import signals as lifecycle_signals
from lifecycle.models import AgentSession, LifecycleEvent, SessionEvent
from projects import access
from questions import signals as question_signals
from questions.models import Answer, CancelReason, Question, Status
from questions.serializers import question_data

# Programs that see every project; those that see some join their projects' groups (issue 31) and this one.
EVENTS_GROUP = "events"
EVENTS_PARTIAL_GROUP = "events.partial"


def project_group(project_id: int) -> str:
    return f"events.project.{project_id}"


# Each program's socket is in one of these two groups: with none open anywhere, nothing is rendered for them.
heard = broadcast.when_heard(EVENTS_GROUP, EVENTS_PARTIAL_GROUP)


# Where a program reads the pending questions that did not fit in `questions-queued`.
QUEUE_API = "/api/questions?status=pending"
# A question larger than this goes out as its ids and title (`truncated: true`): see the JSON API for it whole.
ITEM_MAX_BYTES = 256 * 1024


def message(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, "timestamp": timezone.now().isoformat(), **fields}, ensure_ascii=False)


def queued(seen: access.Access = access.EVERYTHING) -> str:
    """The oldest pending questions that fit in one message, how many wait in all, and where the rest are."""
    pending = seen.visible(Question.objects.pending()).select_related("session", "project").order_by("created_at", "pk")
    rendered, taken = fit(pending[: settings.HOOKBRIDGE_QUEUE_PAGE], question_json)
    total = pending.count()
    head = message("questions-queued", total=total, more=total - taken, next=QUEUE_API if total > taken else None)
    return with_list(head, "questions", rendered)


def question_json(question: Question) -> str:
    """A question in the JSON API's shape, serialised once; cut to its ids when it alone would pass ITEM_MAX_BYTES."""
    data = question_data(question)
    text = json.dumps(data, ensure_ascii=False)
    if len(text) > ITEM_MAX_BYTES // 4 and size_of(text) > ITEM_MAX_BYTES:
        text = json.dumps(cut_down(question, data), ensure_ascii=False)
    return text


def cut_down(question: Question, data: dict[str, Any]) -> dict[str, Any]:
    keep = ("id", "kind", "asker", "status", "createdAt", "resolvedAt", "session", "agentWaiting", "answer")
    return {key: data[key] for key in keep} | {"truncated": True, "question": question.short_title}


def question_message(kind: str, question: Question, data: dict[str, Any], **fields: Any) -> str:
    """A message that carries `question`: built once, and again with the question cut down only when too large."""
    text = message(kind, question=data, **fields)
    if len(text) > ITEM_MAX_BYTES // 4 and size_of(text) > ITEM_MAX_BYTES:
        text = message(kind, question=cut_down(question, data), **fields)
    return text


def lifecycle_data(event: LifecycleEvent) -> dict[str, Any]:
    """A lifecycle event as MAXSIM's agents submitted it (snake_case), with its id and session."""
    return {"id": event.pk, **event.as_submitted(), "session": str(event.session_id) if event.session_id else None}


def current_state(seen: access.Access = access.EVERYTHING) -> list[str]:
    """What a program gets on (re)connect: the queue, then the last lifecycle event of each agent at work."""
    # Oldest first, as if they had just happened.
    agents_now = reversed(LifecycleEvent.latest_per_agent(projects=seen.project_ids))
    return [queued(seen), *(message("lifecycle", event=lifecycle_data(event)) for event in agents_now)]


def _send(text: str, project: int | None) -> None:
    event = {"type": "events.message", "text": text}
    broadcast.send(EVENTS_GROUP, event)
    if project is not None:
        broadcast.send(project_group(project), event)


@receiver(question_signals.question_asked)
@heard
def question_asked(sender: Any, question: Question, new: bool = True, **kwargs: Any) -> None:
    # new=False: a question that was cancelled is pending again (its agent asked again).
    data = question_data(question)
    _send(
        question_message("question-received", question, data, questionId=str(question.pk), new=new), question.project_id
    )


@receiver(question_signals.question_resolved)
@heard
def question_resolved(sender: Any, question_id: uuid.UUID, answer: Answer | None = None, **kwargs: Any) -> None:
    question = Question.as_resolved(question_id, answer)
    data = question_data(question)
    fields: dict[str, Any] = {"questionId": data["id"]}
    if question.status == Status.ANSWERED:
        kind = "question-answered"
        fields["answer"] = data["answer"]
    elif question.status == Status.TIMED_OUT:
        kind = "question-timed-out"
    else:
        kind = "question-cancelled"
        fields["reason"] = question.cancel_reason
        if question.cancel_reason == CancelReason.DISMISSED:
            fields["dismissedBy"] = question.dismissed_by
    _send(question_message(kind, question, data, **fields), question.project_id)


@receiver(question_signals.question_claimed)
@heard
def question_claimed(sender: Any, question_id: uuid.UUID, **kwargs: Any) -> None:
    question = Question.objects.get(pk=question_id)
    expires = question.claim_expires
    _send(
        message(
            "question-claimed",
            questionId=str(question.pk),
            claimedBy=question.claimed_by,
            claimedUntil=expires.isoformat() if expires else None,
        ),
        question.project_id,
    )


@receiver(question_signals.agent_presence_changed)
@heard
def agent_presence_changed(sender: Any, question_id: uuid.UUID, **kwargs: Any) -> None:
    """The agent stopped waiting on a pending question, or came back (the question's agentWaiting)."""
    question = Question.objects.get(pk=question_id)
    data = question_data(question)
    _send(question_message("question-updated", question, data, questionId=str(question.pk)), question.project_id)


@receiver(question_signals.questions_changed)
@heard
def questions_changed(sender: Any, **kwargs: Any) -> None:
    # Many questions at once (a worker stopping): the whole queue again, as on connect.
    broadcast.send(EVENTS_GROUP, {"type": "events.message", "text": queued()})
    broadcast.send(EVENTS_PARTIAL_GROUP, {"type": "events.requeue"})


@receiver(lifecycle_signals.event_recorded)
@heard
def lifecycle_event(sender: Any, event: LifecycleEvent, **kwargs: Any) -> None:
    _send(message("lifecycle", event=lifecycle_data(event)), event.project_id)


@receiver(lifecycle_signals.session_event_recorded)
@heard
def session_event(sender: Any, event_id: int, **kwargs: Any) -> None:
    event = SessionEvent.objects.select_related("session").get(pk=event_id)
    _send(message("session-event", session=str(event.session_id), event=event.message()), event.session.project_id)


@receiver(lifecycle_signals.session_changed)
@heard
def session_changed(sender: Any, guid: uuid.UUID, change: str = "", **kwargs: Any) -> None:
    if change not in ("opened", "closed"):
        return  # a question touched it: its questions' own messages say what changed
    session = AgentSession.objects.get(pk=guid)
    _send(message(f"session-{change}", session=str(guid), state=session.as_dict()), session.project_id)
