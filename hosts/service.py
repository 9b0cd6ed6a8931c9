"""What a hook call changes in the database: the host's session and its events, approvals, deliveries.

Each function is one short transaction (or a few), run by the endpoint through
database_sync_to_async; none of them waits for a person.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from datetime import timedelta
from pathlib import PurePosixPath
from typing import Any

from django.db import transaction
from django.utils import timezone

from approvals import policies
from approvals.models import ApprovalRule
from approvals.rules import RuleDecision
from hosts import registry
from hosts.hook_calls import HookCall, bounded, outcome
from lifecycle.models import AgentSession, SessionEventType, SessionMessage
from projects.models import Project
from questions.kinds import Kind, kind_of
from questions.models import Question, Status
from tokens.models import AgentToken

logger = logging.getLogger(__name__)


def session_for(token: AgentToken, call: HookCall) -> AgentSession:
    """The session the host's session_id names (created on its first event, reopened if it ended).

    Raises lifecycle.models.SessionTaken when another token's session has that id.
    """
    cwd = call.cwd
    project = PurePosixPath(cwd).name if cwd else ""
    host = registry.title(call.host)
    name = f"{host} in {cwd}" if cwd else f"{host} session {call.session_id}"
    session, _ = AgentSession.open_as(call.guid, token=token, name=name[:200], project=project[:200], host=call.host)
    if session.closed_at is not None and call.event != "SessionEnd":
        session.reopen()
    return session


def record(session: AgentSession, call: HookCall) -> None:
    """The hook event as a session event, and what the agent is doing now."""
    body, event = call.body, call.event
    if event == "UserPromptSubmit":
        prompt, size = bounded(body.get("prompt", ""))
        first = prompt.strip().splitlines()[0][:80] if prompt.strip() else ""
        session.record(SessionEventType.PROMPT, activity=f"working on: {first}", prompt=prompt, promptSize=size)
    elif event == "PreToolUse":
        session.record(
            SessionEventType.TOOL,
            activity=f"running {call.summary()}",
            hook=event,
            tool=call.tool_name,
            summary=call.summary(),
            toolUseId=body.get("tool_use_id"),
        )
    elif event == "PostToolUse":
        response, size = bounded(body.get("tool_response"))
        ended = outcome(body.get("tool_response"))
        millis = body.get("duration_ms")
        took = f", {millis} ms" if millis is not None else ""
        session.record(
            SessionEventType.TOOL,
            activity=f"ran {call.summary()} ({ended}{took})",
            hook=event,
            tool=call.tool_name,
            summary=call.summary(),
            toolUseId=body.get("tool_use_id"),
            durationMs=millis,
            outcome=ended,
            response=response,
            responseSize=size,
        )
    elif event == "Stop":
        said, size = bounded(body.get("last_assistant_message") or "")
        session.record(
            SessionEventType.STOP,
            activity="stopped: waiting for the next prompt",
            lastMessage=said,
            lastMessageSize=size,
            stopHookActive=bool(body.get("stop_hook_active")),
        )
    elif event == "SessionEnd":
        session.record(SessionEventType.END, activity="session ended", reason=str(body.get("reason") or ""))
        session.close()
    elif event == "PermissionRequest":
        session.record(
            SessionEventType.APPROVAL,
            activity=f"waiting for approval: {call.summary()}",
            state="asked",
            tool=call.tool_name,
            summary=call.summary(),
        )
    else:
        # Notification, SubagentStop, PreCompact, events newer than this server: kept as sent.
        kept, size = bounded({k: v for k, v in body.items() if k not in ("session_id", "hook_event_name")})
        message = body.get("message")
        session.record(
            SessionEventType.HOOK,
            hook=event,
            message=message if isinstance(message, str) else None,
            body=kept,
            bodySize=size,
        )


def approval_payload(call: HookCall) -> dict[str, Any]:
    body = call.body
    return {
        "event": call.event,
        "tool_name": call.tool_name,
        "tool_input": call.tool_input if call.tool_input is not None else {},
        "permission_suggestions": body.get("permission_suggestions") or [],
        "tool_use_id": body.get("tool_use_id"),
        "cwd": call.cwd,
        "session_id": call.session_id,
        "permission_mode": body.get("permission_mode"),
        "host": call.host,
        "host_title": registry.title(call.host),
        "host_tool_name": body.get("host_tool_name") or call.tool_name,
        "digest": policies.digest(call.tool_name, call.tool_input if call.tool_input is not None else {}, call.cwd),
    }


def approval_key(tool_name: str, tool_input: Any) -> str:
    """One approval per tool use: a PermissionRequest hook and the prompt tool asking at once share it."""
    canonical = json.dumps(["approval", tool_name, tool_input], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def approvals_overtaken(session: AgentSession, call: HookCall) -> int:
    """A tool ran whose approval still waits on the dashboards: the host decided it elsewhere. The cards leave.

    Claude Code's terminal UI asks at its own prompt while the PermissionRequest hook waits, and a "Yes" there
    runs the tool without closing the hook's request (its Esc does close it), so the card would wait on for a
    decision nobody can make any more. The tool use's PostToolUse says it ran: that very tool use, in the same
    session, with the same input. Returns how many cards left.
    """
    if call.event != "PostToolUse":
        return 0
    key = approval_key(call.tool_name, call.tool_input if call.tool_input is not None else {})
    waiting = Question.objects.filter(session=session, kind=Kind.APPROVAL, status=Status.PENDING, fingerprint=key)
    # The held request is woken by the change and answers "no decision", which the host no longer reads.
    return sum(question.host_stopped_waiting(TOOL_RAN) for question in waiting)


TOOL_RAN = "the tool ran: decided at the host's own prompt"


def approval_text(tool_name: str, summary: str) -> str:
    return f"May the agent run {summary}?" if summary != tool_name else f"May the agent use {tool_name}?"


def ask_approval(
    token: AgentToken | None,
    asker_name: str,
    payload: dict[str, Any],
    session: AgentSession | None,
    summary: str,
    *,
    new_id: uuid.UUID | None = None,
) -> tuple[Question, bool]:
    """A pending approval on every dashboard (or the same tool use's approval, already asked).

    The project's first matching policy says who must decide it (approvals.policies), written on the row.
    """
    tool_name = payload["tool_name"]
    project_id = (
        session.project_id
        if session is not None and session.project_id
        else Project.for_agent(token.project_id if token else None)
    )
    use = policies.ToolUse(
        project_id=project_id,
        host=str(payload.get("host") or ""),
        tool_name=tool_name,
        tool_input=payload["tool_input"],
        cwd=str(payload.get("cwd") or ""),
        token_id=token.pk if token else None,
    )
    return Question.ask(
        asker=token,
        asker_name=asker_name,
        text=approval_text(tool_name, summary),
        options=[],
        allow_free_text=False,
        kind=Kind.APPROVAL,
        payload=payload,
        session=session,
        key=approval_key(tool_name, payload["tool_input"]),
        new_id=new_id,
        requirement=policies.requirement(use, token),
    )


def record_rule_decision(
    token: AgentToken | None,
    asker_name: str,
    payload: dict[str, Any],
    session: AgentSession | None,
    summary: str,
    ruled: RuleDecision,
) -> Question:
    """A rule's decision, kept in history like a person's: which rule, when, how fast, on what input."""
    kind = kind_of(Kind.APPROVAL)
    # An unsaved question is what the kind reads: the row is written with the answer, below.
    reply = kind.parse(Question(kind=Kind.APPROVAL, payload=payload, allow_free_text=False), ruled.decision)
    pks = [rule.pk for rule in ruled.ruling.rules]
    payload = {**payload, "decided_by_rule": pks[0], "decided_by_rules": pks}
    payload["decided_in_us"] = round(ruled.decided_in_us, 1)
    question = Question.decided(
        asker=token,
        asker_name=asker_name,
        kind=Kind.APPROVAL,
        text=approval_text(payload["tool_name"], summary),
        payload=payload,
        reply=reply,
        by_name=ruled.label,
        source="rule",
        session=session,
        asked_at=ruled.asked_at,
        decided_at=ruled.asked_at + timedelta(microseconds=ruled.decided_in_us),
    )
    ApprovalRule.count_decisions(pks)
    if session is not None:
        approval_decided(session, question)
    return question


def approval_decided(session: AgentSession, question: Question) -> None:
    """The approval's outcome in the session's history, with how long it waited."""
    waited = question.waited_seconds
    if question.status == Status.ANSWERED:
        answer = question.answer
        decision, by = answer.data.get("behavior", "?"), answer.answered_by
        activity = f"{'allowed' if decision == 'allow' else 'denied'} {question.payload.get('tool_name', '')} ({by})"
    elif question.agent_left_reason == TOOL_RAN:
        # The tool ran on a decision at the host's own prompt: its PostToolUse says what the agent does now.
        decision, by, activity = "none", question.outcome_words, None
    else:
        decision, by = "none", question.outcome_words
        activity = f"no decision on {question.payload.get('tool_name', '')}: the host asks at the terminal"
    session.record(
        SessionEventType.APPROVAL,
        activity=activity,
        state="decided",
        tool=question.payload.get("tool_name", ""),
        questionId=str(question.pk),
        decision=decision,
        by=by,
        waitedMs=round(waited * 1000) if waited is not None else None,
        edited="updatedInput" in question.answer.data if question.status == Status.ANSWERED else False,
    )


def deliveries(token: AgentToken, session: AgentSession, via: str) -> list[str]:
    """What a person left for the agent since its last hook call, now marked delivered: each handed over once.

    People's messages from the session page, then answers to the agent's own questions that came
    after it stopped waiting for them.
    """
    texts = [f"{m.sent_by} (on Hook Bridge) says: {m.text}" for m in SessionMessage.take_undelivered(session, via)]
    late = (
        Question.objects.select_related("answer")
        .filter(
            asker=token, session=session, status=Status.ANSWERED, delivered_at__isnull=True, agent_left_at__isnull=False
        )
        .exclude(kind=Kind.APPROVAL)
        .order_by("resolved_at")
    )
    for question in late:
        # Conditional, like the messages: a re-ask or another hook call may have taken it first.
        won = Question.objects.filter(pk=question.pk, delivered_at__isnull=True).update(delivered_at=timezone.now())
        if won:
            answer = question.answer
            texts.append(
                f"While you worked, {answer.answered_by} answered your question '{question.short_title}': {answer.text}"
            )
    if texts:
        with transaction.atomic():
            for text in texts:
                session.record(SessionEventType.MESSAGE, text=bounded(text)[0], via=via)
    return texts
