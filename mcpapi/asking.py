"""What every asking tool shares: who is calling, asking, waiting, and the result handed back."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
import webbrowser
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from channels.layers import get_channel_layer
from django.conf import settings
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

from hookbridge_site import layer_groups, presence, runtime
from hookbridge_site.db import database_sync_to_async
from hookbridge_site.limits import OverLimit
from mcpapi import calls, client_log
from questions import waiting
from questions.models import CancelReason, Kind, Question, RateLimited, Status, question_group
from questions.waiting import WaitPolicy, wait_for_resolution
from tokens.models import AgentToken

logger = logging.getLogger(__name__)


def caller() -> tuple[AgentToken | None, str]:
    """The token the request came with (unsaved: only its pk and name are needed)."""
    access = get_access_token()
    if access is None:
        # Only reachable without HTTP auth: stdio without a token.
        return None, calls.local_asker_name.get()
    name = str((access.claims or {}).get("name", access.client_id))
    return AgentToken(pk=int(access.client_id), name=name), name


def json_result(payload: dict[str, Any], *, text: str | None = None, is_error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text if text is not None else json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
        is_error=is_error,
    )


def _status(status: str, question: Question, message: str, *, is_error: bool) -> CallToolResult:
    return json_result({"status": status, "questionId": str(question.pk), "message": message}, is_error=is_error)


def keep_waiting_text(tool: str, question_id: str, *, can_wait_for_answer: bool) -> str:
    """How an agent keeps waiting, naming only tools its endpoint lists."""
    wait_call = f'call wait_for_answer with question_id="{question_id}"'
    ask_again = f"call {tool} again with the same arguments (it picks up the same question)"
    if tool == "wait_for_answer":
        how = wait_call + " again"
    elif can_wait_for_answer:
        how = f"{wait_call}, or {ask_again}"
    else:
        how = ask_again
    return f"Nothing is lost: to keep waiting, {how}."


def outcome(question: Question, tool: str, *, can_wait_for_answer: bool) -> CallToolResult:
    """The tool result for a question as it now stands; `tool` is the one the agent called."""
    qid = str(question.pk)
    if question.status == Status.ANSWERED:
        spec, answer = question.kind_spec, question.answer
        structured = spec.structured_result(question, answer.data)
        return json_result(structured, text=spec.result_text(question, answer.text, answer.data))
    if question.status == Status.PENDING:
        message = (
            f"No answer yet; question {qid} is still pending on the dashboard ({presence.public_url()}/). "
            + keep_waiting_text(tool, qid, can_wait_for_answer=can_wait_for_answer)
        )
        return _status("pending", question, message, is_error=False)
    message = question.status_sentence(to_agent=True)
    if question.status == Status.TIMED_OUT:
        return _status("timed_out", question, message, is_error=True)
    if question.cancel_reason == CancelReason.DISMISSED:
        return _status("dismissed", question, message, is_error=False)
    return _status("cancelled", question, message, is_error=True)


def has_progress_token(ctx: Context) -> bool:
    meta = ctx.request_context.meta or {}
    return meta.get("progress_token") is not None or meta.get("progressToken") is not None


async def offers(ctx: Context, tool: str) -> bool:
    """Whether the endpoint this call came through lists `tool` (tool sets combine by URL)."""
    return any(listed.name == tool for listed in await ctx.mcp_server.list_tools())


class Progress:
    """A call's progress notifications, each value above the one before, as the specification asks.

    The values are seconds waited; a note sent as the wait starts and the wait's own first
    report both fall at 0, and a client may drop (or a strict one refuse) the second.
    """

    STEP = 0.001

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._last: float | None = None

    async def __call__(self, value: float, message: str) -> None:
        if self._last is not None and value <= self._last:
            value = self._last + self.STEP
        self._last = value
        await self._ctx.report_progress(value, None, message)


async def wait(
    question: Question,
    ctx: Context,
    asker: AgentToken | None,
    tool: str,
    *,
    channel: str | None = None,
    progress: Progress | None = None,
    just_written: bool = False,
) -> CallToolResult:
    """Block until the question is resolved (or the hold runs out) and build the result.

    `progress`: the call's reporter, when it has already reported (its values only go up).
    `just_written`: `question` is as this call wrote it, `channel` in its group since before (no first read).
    """
    with_progress = has_progress_token(ctx)
    progress = progress or Progress(ctx)
    cancelled = calls.cancelled_by_client.get()

    request_id = str(ctx.request_id)
    extra_groups = (calls.call_group(asker.pk, request_id),) if asker is not None else ()
    final = await wait_for_resolution(
        question.pk,
        WaitPolicy.from_settings(with_progress=with_progress),
        progress=progress if with_progress else None,
        extra_groups=extra_groups,
        cancel_reason=lambda: runtime.stdio_cancel_reasons.pop(request_id, None),
        channel=channel,
        cancel_after_close=calls.cancellable_by_notification.get(),
        on_client_cancel=cancelled.set if cancelled is not None else None,
        written=question if just_written else None,
    )
    if final.status == Status.ANSWERED:
        deliveries = calls.pending_deliveries.get()
        if deliveries is None:
            await database_sync_to_async(final.mark_delivered)()
        else:
            deliveries.append(final.pk)
    can_wait = final.status == Status.PENDING and await offers(ctx, "wait_for_answer")
    return outcome(final, tool, can_wait_for_answer=can_wait)


async def open_dashboard_if_unwatched(question: Question) -> str | None:
    """Open the question in the browser if nobody has a dashboard open (stdio by default, serve --open).

    Over stdio the dashboard is a `serve` process on the same database: the question opens
    at the address it listens on (hookbridge_site.presence). Returns a note for the agent (and
    so the user) when it could not be opened.
    """
    if not settings.HOOKBRIDGE_OPEN_BROWSER:
        return None
    others = await asyncio.to_thread(presence.servers)
    if runtime.open_dashboards + sum(server.dashboards for server in others) > 0:
        return None
    base = others[0].url if others else settings.HOOKBRIDGE_PUBLIC_URL
    url = f"{base}/questions/{question.pk}/"
    if runtime.stdio and not others:
        return (
            f"No Hook Bridge dashboard is running to answer question {question.pk} on: start one with "
            "`hookbridge serve` (or `make serve` in a checkout) and open the address it prints, or answer "
            f'from a terminal with `hookbridge questions answer {question.pk} "<answer>"`.'
        )
    try:
        opened = await asyncio.to_thread(webbrowser.open, url)
    except Exception:
        logger.warning("Could not open a browser", exc_info=True)
        opened = False
    if opened:
        return None
    return f"Nobody has the Hook Bridge dashboard open and no browser could be opened: answer at {url}"


async def _left_behind(writing: asyncio.Future[tuple[Question, bool]]) -> None:
    """A call cut (client gone, worker stopping) after its question was written and before it waited.

    The question exists and nobody waits on it: marked as left, like one whose wait was cut.
    """
    with anyio.CancelScope(shield=True):
        try:
            written, _ = await writing
        except Exception:
            return  # nothing was written
        finally:
            runtime.asks_in_flight.discard(writing)
        why = "the server restarted" if runtime.shutting_down.is_set() else "the connection to the agent closed"
        await database_sync_to_async(written.agent_stopped_waiting)(why)


async def listen_for_cancel(asker: AgentToken | None, request_id: str, new_id: uuid.UUID) -> str | None:
    """A channel in the call's cancellation group and in the group of the question it may write, joined first.

    A client may cancel the moment the question is visible (the TypeScript SDK on Esc), which can
    be before the wait has joined the group: the cancel then waits in this channel for the wait.
    Likewise an answer given the moment a new question is written: its wake-up waits here, so the
    wait need not read the row it has just written (questions.waiting, `written`).
    """
    if asker is None:
        return None  # stdio: the SDK cancels the handler itself
    layer = get_channel_layer()
    try:
        channel: str = await layer.new_channel("hookbridge.wait")
        await layer.group_add(calls.call_group(asker.pk, request_id), channel)
        await layer.group_add(question_group(new_id), channel)
    except Exception:
        logger.warning("Channel layer unavailable: request %s is joined to its cancel group when it waits", request_id)
        return None
    return channel


async def stop_listening(
    asker: AgentToken | None, request_id: str, channel: str | None, new_id: uuid.UUID, *, cancel_group: bool = True
) -> None:
    """Leave the groups listen_for_cancel joined: the new question's, and (unless the wait goes on) the cancel group."""
    if asker is None or channel is None:
        return
    groups = [question_group(new_id), *([calls.call_group(asker.pk, request_id)] if cancel_group else [])]
    await layer_groups.leave(groups, channel)


@contextmanager
def waiting_slot(asker: AgentToken | None) -> Iterator[None]:
    """One of the token's HOOKBRIDGE_MAX_WAITING_PER_TOKEN waiting calls, taken before anything is written."""
    if asker is None:  # stdio: one client per process
        yield
        return
    try:
        with waiting.waiting_slot(asker.pk, what="calls waiting for a person with this token"):
            yield
    except OverLimit as exc:  # raised only on the way in: the body never takes a second slot
        raise ToolError(str(exc)) from None


async def ask_and_wait(
    ctx: Context,
    *,
    tool: str,
    kind: Kind,
    text: str,
    options: list[dict[str, Any]] | None = None,
    allow_free_text: bool = True,
    payload: dict[str, Any] | None = None,
    timeout: float | None,
    key: str | None = None,
) -> CallToolResult:
    asker, asker_name = caller()
    progress = Progress(ctx)
    # A slot of the token's waiting calls, taken before anything is written.
    with waiting_slot(asker):
        request_id = str(ctx.request_id) if asker is not None else ""
        new_id = uuid.uuid4()
        listening = await listen_for_cancel(asker, request_id, new_id)
        writing = asyncio.ensure_future(
            database_sync_to_async(Question.ask)(
                asker=asker,
                asker_name=asker_name,
                text=text,
                options=options or [],
                allow_free_text=allow_free_text,
                kind=kind,
                payload=payload or {},
                timeout_seconds=timeout,
                key=key,
                new_id=new_id,
            )
        )
        runtime.asks_in_flight.add(writing)
        try:
            question, reattached = await asyncio.shield(writing)
            logger.info("%s %s from %s (%s)", kind, question.pk, asker_name, "re-attached" if reattached else "new")
            note = None if reattached else await open_dashboard_if_unwatched(question)
            if note:
                # At once, not only in the result: as progress to a client that asked for it, else as a log message.
                if has_progress_token(ctx):
                    await progress(0, note)
                else:
                    await client_log.ClientLog(ctx, logger_name="hookbridge")("warning", note)
        except RateLimited as exc:
            runtime.asks_in_flight.discard(writing)
            await stop_listening(asker, request_id, listening, new_id)
            raise ToolError(str(exc)) from None
        except Exception:
            runtime.asks_in_flight.discard(writing)
            await stop_listening(asker, request_id, listening, new_id)
            raise
        except asyncio.CancelledError:
            await _left_behind(writing)
            await stop_listening(asker, request_id, listening, new_id)
            raise
        just_written = listening is not None and question.pk == new_id
        if not just_written:
            # Re-attached: the wait joins that question's group and reads its row.
            await stop_listening(asker, request_id, listening, new_id, cancel_group=False)
        # No await between these two: from here the wait counts the question (questions.runtime.waiting_on).
        runtime.asks_in_flight.discard(writing)
        result = await wait(question, ctx, asker, tool, channel=listening, progress=progress, just_written=just_written)
        if note:
            result.content.append(TextContent(type="text", text=note))
        return result
