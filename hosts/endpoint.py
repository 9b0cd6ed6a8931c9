"""POST /hooks/<host> (hosts/<host>.py): an agent host's hooks, answered as the host reads them.

Claude Code POSTs here itself (HTTP hooks); Gemini CLI, Codex and Copilot CLI run `hookbridge hook <host>`, which
POSTs its hook's JSON to /hooks/<host> and prints the answer. Either way the body is read in Claude Code's dialect
(hosts/<host>.py), so one rule set and one kind of card serve both, and answered in the host's own.

A plain ASGI endpoint, not a Django view, for the same reason /mcp is one: an approval
holds its request open for up to ten minutes, and the host closing it (its timeout, the
person answering in the terminal, Esc) must reach us at once as `http.disconnect`, so the
card leaves every dashboard. Django's sync middleware would park each held request on a
thread and never tell the view that the host went away.

Every answer is JSON the host honours; "no decision" is an empty object, after which the
host falls back to its own prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs

import anyio
from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone
from starlette.types import Receive, Scope, Send

from approvals import grants, policies
from approvals import rules as policy
from approvals.rules import RuleDecision
from core import jsonapi
from core.asgi_io import header, read_body, send_json
from core.db import database_sync_to_async
from core.errors import Refused
from core.limits import OverLimit
from hosts import base, hook_calls, registry, service
from hosts.base import Host
from hosts.hook_calls import BadHookBody, HookCall
from lifecycle.models import AgentSession, SessionTaken
from projects.models import Project
from questions.asking import SERVER_RESTARTED, Caller, WaitPolicy, ask_and_wait
from questions.decisions import Decision
from questions.models import Question, RateLimited, Status
from tokens import cache as token_cache
from tokens.auth import over_rate, parse_bearer, refuse_slowly
from tokens.models import AgentToken
from tokens.models import Scope as TokenScope

logger = logging.getLogger(__name__)

PATH = "/hooks/claude"
PATHS = frozenset(registry.PATHS)
NO_DECISION: dict[str, Any] = base.NO_DECISION


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["method"] != "POST":
        await send_json(send, 405, {"error": "hooks are POSTed here"}, allow=b"POST")
        return
    host = registry.PATHS.get(scope["path"].rstrip("/"), registry.HOSTS["claude-code"])
    try:
        token = await _authenticate(scope)
        call = await _read_call(receive, host)
        # A rule's time is counted from here: the token and the body are in hand (issue 19 caches the token).
        read_at = time.perf_counter()
        approve = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("approve", [""])[0] not in ("", "0")
        await _handle(call, token, approve, receive, Answering(send, host, call.event), read_at)
    except Refused as exc:
        await send_json(send, exc.status, exc.body, **exc.header_bytes())
    except DatabaseError:
        logger.exception("The database is unreachable")
        await send_json(send, 503, {"error": "Hook Bridge cannot reach its database right now"})


async def _authenticate(scope: Scope) -> AgentToken:
    raw = parse_bearer(header(scope, b"authorization"))
    token = await token_cache.authenticate(raw)
    if token is None:
        raise Refused("a valid agent token is required: Authorization: Bearer <token>", 401)
    if token.scope != TokenScope.AGENT:
        raise Refused(f"token '{token.name}' has scope '{token.scope}'; hooks need a token with scope 'agent'", 403)
    if (limited := over_rate(token)) is not None:
        await refuse_slowly(token.pk)
        # The host's own prompt asks instead (a hook's failure is no decision).
        raise Refused(limited.message, 429, retry_after=limited.retry_after)
    return token


async def _read_call(receive: Receive, host: Host) -> HookCall:
    body = await read_body(receive, settings.HOOKBRIDGE_MAX_BODY_BYTES)
    if body is None:
        raise Refused(f"the body is larger than {settings.HOOKBRIDGE_MAX_BODY_BYTES} bytes", 413, field="body")
    try:
        payload = jsonapi.loads(body)
    except jsonapi.BadJSON as exc:
        raise Refused(f"the body {exc}", field="body") from None
    if isinstance(payload, dict) and (problem := jsonapi.unstorable(payload)):
        raise Refused(problem, field=problem.split(":", 1)[0])
    try:
        return hook_calls.parse(host.to_claude(payload), host.name)
    except BadHookBody as exc:
        raise Refused(str(exc), field=exc.field) from None


class Answering:
    """The host's answer channel: a decision in Claude Code's dialect, sent in the host's."""

    def __init__(self, send: Send, host: Host, event: str) -> None:
        self.send, self.host, self.event = send, host, event

    async def answer(self, said: dict[str, Any]) -> None:
        await send_json(self.send, 200, self.host.answer(self.event, said))

    async def refuse(self, status: int, body: dict[str, Any]) -> None:
        await send_json(self.send, status, body)


async def _handle(
    call: HookCall, token: AgentToken, approve: bool, receive: Receive, send: Answering, t0: float
) -> None:
    asks = call.event == "PermissionRequest" or (call.event == "PreToolUse" and approve)
    if asks or call.event == "PreToolUse":
        ruled = await policy.decide_by_rule(
            call.tool_name, call.tool_input, call.cwd, since=t0, project_id=token.project_id
        )
        if ruled is None and asks:
            ruled = await _granted(call, token, t0)
        if ruled is not None and (asks or ruled.ruling.action == "deny"):
            # Decided without a person: answered first, written after (the host is not kept waiting on a write).
            await send.answer(host_answer(call, ruled.decision, by=ruled.label))
            await _record_rule(call, token, ruled)
            return
    session = await _session(call, token)
    if asks:
        await _approval(call, token, session, receive, send)
        return
    via = call.event
    stop_hook_active = bool(call.body.get("stop_hook_active"))

    hands_over = via in registry.HOSTS[call.host].hands_over_at

    def record_and_collect() -> list[str]:
        service.record(session, call)
        service.approvals_overtaken(session, call)
        # On a Stop that is already a hook's continuation, nothing is handed over: it would loop.
        if hands_over and (via == "PostToolUse" or (via == "Stop" and not stop_hook_active)):
            return service.deliveries(token, session, via)
        return []

    texts = await database_sync_to_async(record_and_collect)()
    await send.answer(delivery_answer(via, texts))


async def _granted(call: HookCall, token: AgentToken, t0: float) -> policy.RuleDecision | None:
    """A grant of this session (a person's "Allow for this session") deciding the tool use, if one does."""

    def read() -> policy.Ruling | None:
        session = AgentSession.objects.filter(pk=call.guid, token=token).only("pk", "project_id").first()
        if session is None:
            return None
        use = policies.ToolUse(
            project_id=session.project_id or Project.for_agent(token.project_id),
            host=call.host,
            tool_name=call.tool_name,
            tool_input=call.tool_input if call.tool_input is not None else {},
            cwd=call.cwd,
            token_id=token.pk,
        )
        return grants.decide(session.pk, call.tool_name, use.tool_input, call.cwd, use)

    ruling = await database_sync_to_async(read)()
    if ruling is None:
        return None
    decided_in_us = (time.perf_counter() - t0) * 1e6
    return policy.RuleDecision(ruling, timezone.now() - timedelta(microseconds=decided_in_us), decided_in_us)


async def _session(call: HookCall, token: AgentToken) -> AgentSession:
    try:
        session: AgentSession = await database_sync_to_async(service.session_for)(token, call)
    except SessionTaken:
        raise Refused(f"session {call.session_id} belongs to another token", 409, field="session_id") from None
    return session


async def _record_rule(call: HookCall, token: AgentToken, ruled: RuleDecision) -> None:

    def write() -> None:
        session: AgentSession | None = None
        with contextlib.suppress(SessionTaken):  # another token's session: the decision is kept without it
            session = service.session_for(token, call)
        if session is not None and call.event == "PreToolUse":
            service.record(session, call)
        payload = service.approval_payload(call)
        service.record_rule_decision(token, token.name, payload, session, call.summary(), ruled)

    try:
        await database_sync_to_async(write)()
    except Exception:
        # The host has its answer; losing the record is logged, never turned into an error it sees.
        logger.exception("Could not record %s's decision on %s", ruled.label, call.summary())


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _approval(
    call: HookCall, token: AgentToken, session: AgentSession, receive: Receive, send: Answering
) -> None:
    """A person decides: the card goes up, the request is held until a decision, the host leaves, or time runs out.

    questions.asking holds it; this adapter tells it how the host leaves (its request closes) and
    reads the outcome as the host does.
    """

    def write(new_id: uuid.UUID) -> tuple[Question, bool]:
        service.record(session, call)
        payload = service.approval_payload(call)
        return service.ask_approval(token, token.name, payload, session, call.summary(), new_id=new_id)

    async def host_left(question_id: uuid.UUID, why: str) -> None:
        # Nobody asks an approval again: the host has moved on, so the card leaves every dashboard.
        logger.info("Approval %s: %s", question_id, why)

        def mark() -> None:
            question = Question.objects.get(pk=question_id)
            if question.host_stopped_waiting(why, server_restarted=why == SERVER_RESTARTED):
                service.approval_decided(session, question)

        await database_sync_to_async(mark)()

    caller = Caller(
        token_id=token.pk,
        slot_words="approvals waiting for a person with this token",
        left=host_left,
        closed="the host closed the request: decided at the terminal, Esc, or its timeout",
    )

    def policy(question: Question) -> WaitPolicy:
        # Our own limit, set below the host's hook timeout: "no decision" then lets the host ask at the
        # terminal, where a hook that timed out would fail the request. Counted from the approval's ask.
        # A policy's own timeout, when shorter, ends the wait sooner: then its fallback decides (below).
        asked_ago = (timezone.now() - question.created_at).total_seconds()
        hold = settings.HOOKBRIDGE_APPROVAL_TIMEOUT
        if question.requirement.get("timeout"):
            hold = min(hold, float(question.requirement["timeout"]))
        return WaitPolicy(
            slice_seconds=settings.HOOKBRIDGE_WAIT_SLICE,
            max_hold=max(hold - asked_ago, 0.0),
            progress_interval=None,
            leave_when_held_out=False,
        )

    asking = asyncio.ensure_future(ask_and_wait(write, policy, caller))
    leaving = asyncio.ensure_future(_until_disconnect(receive))
    try:
        await asyncio.wait({asking, leaving}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        # The host gone (or the server stopping): the ask's own clean-up marks the approval.
        leaving.cancel()
        if not asking.done():
            asking.cancel()
        with anyio.CancelScope(shield=True), contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({asking})
    if asking.cancelled():
        return
    try:
        final = asking.result().question
    except (OverLimit, RateLimited) as exc:
        # Not an error the person at the host can act on: the host asks at the terminal.
        await send.refuse(429, {"error": str(exc)})
        return
    await _outcome(call, session, final, send)


async def _outcome(call: HookCall, session: AgentSession, final: Question, send: Answering) -> None:
    """The held approval's outcome, as the hook that asked reads it, and kept in the session's history."""
    if final.status == Status.PENDING and deferrable(call, final):
        # Claude Code's `defer`: a `claude -p` run stops on this tool call and is resumed later; the approval stays
        # answerable meanwhile, and the resumed run's same tool use finds the decision (re-attached by its key).
        await database_sync_to_async(final.agent_stopped_waiting)(DEFERRED)
        await send.answer(DEFER)
        return
    if final.status == Status.PENDING:
        await database_sync_to_async(final.time_out)()
        final = await database_sync_to_async(Question.objects.select_related("answer").get)(pk=final.pk)
    if final.status == Status.ANSWERED:
        answer = final.answer
        await send.answer(host_answer(call, answer.data, by=answer.answered_by))
        await database_sync_to_async(final.mark_delivered)()
    else:
        await send.answer(NO_DECISION)
    await database_sync_to_async(service.approval_decided)(session, final)


DEFERRED = "deferred: the run stopped on this tool call and goes on when it is resumed (claude -p --resume)"
DEFER: dict[str, Any] = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "defer",
        "permissionDecisionReason": "Hook Bridge: nobody on the team decided yet; resume the session once someone has",
    }
}


def deferrable(call: HookCall, question: Question) -> bool:
    """Whether nobody deciding in time is Claude Code's `defer` rather than "no decision": its approving
    PreToolUse (the only hook that can defer), when no policy's fallback decides instead. Claude Code honours it in
    `claude -p` only; in its terminal UI it ignores it and asks at its own prompt, which is "no decision" anyway."""
    return call.host == "claude-code" and call.event == "PreToolUse" and question.fallback_decision() is None


def host_answer(call: HookCall, decision: dict[str, Any], *, by: str) -> dict[str, Any]:
    """A decision ({"behavior": ..., ...}) as the hook that asked reads it."""
    if call.event == "PreToolUse":
        decided = Decision.of(decision)
        allow = decided is not None and decided.allowed
        output: dict[str, Any] = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow" if allow else "deny",
            "permissionDecisionReason": f"Allowed by {by} on Hook Bridge" if allow else decision.get("message", ""),
        }
        if decided is not None and allow and decided.updated_input is not None:
            output["updatedInput"] = decided.updated_input
        return {"hookSpecificOutput": output}
    # As a decision the host knows: what Hook Bridge keeps beside it (a grant's minutes) stays here.
    known = Decision.of(decision)
    return {
        "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": known.as_dict() if known else decision}
    }


def delivery_answer(event: str, texts: list[str]) -> dict[str, Any]:
    """What a PostToolUse or Stop hook hands the agent: people's messages, late answers; {} when none."""
    if not texts:
        return NO_DECISION
    said = "\n\n".join(texts)
    if event == "Stop":
        return {"decision": "block", "reason": said}
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": said}}
