"""What every asking tool shares: who is calling, asking, waiting, and the result handed back."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import uuid
import webbrowser
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ImageContent, TextContent

from core import presence
from core.db import database_sync_to_async
from core.limits import OverLimit
from dashboard import runtime as dashboards
from mcpapi import calls, client_log
from mcpapi import runtime as mcp_state
from mcpapi.models import AskTask
from questions import asking as questions_asking
from questions.asking import Caller, WaitPolicy, wait_for_resolution
from questions.models import AnswerImage, CancelReason, Kind, Question, RateLimited, Status
from tokens.models import AgentToken

logger = logging.getLogger(__name__)


def caller() -> tuple[AgentToken | None, str]:
    """The token the request came with (unsaved: only its pk, name and project are needed)."""
    access = get_access_token()
    if access is None:
        # Only reachable without HTTP auth: stdio without a token.
        return None, calls.local_asker_name.get()
    claims = access.claims or {}
    name = str(claims.get("name", access.client_id))
    # Its project decides where its questions go (None: a token for every project).
    return AgentToken(pk=int(access.client_id), name=name, project_id=claims.get("project")), name


def question_url(question_id: Any) -> str:
    return f"{presence.public_url()}/questions/{question_id}/"


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


def outcome(
    question: Question, tool: str, *, can_wait_for_answer: bool, images: Sequence[AnswerImage] = ()
) -> CallToolResult:
    """The tool result for a question as it now stands; `tool` is the one the agent called.

    An answer's images (read by the caller: this runs on the event loop) follow its text as image content.
    """
    qid = str(question.pk)
    if question.status == Status.ANSWERED:
        spec, answer = question.kind_spec, question.answer
        structured = spec.structured_result(question, answer.data)
        result = json_result(structured, text=spec.result_text(question, answer.text, answer.data))
        for image in images:
            encoded = base64.b64encode(bytes(image.data)).decode("ascii")
            result.content.append(ImageContent(type="image", data=encoded, mime_type=image.mime_type))
        return result
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


def call_caller(ctx: Context, asker: AgentToken | None, progress: Progress) -> Caller:
    """This tool call as questions.asking sees its callers: its cancel group, its progress, the SDK's cancels."""
    request_id = str(ctx.request_id)
    cancelled = calls.cancelled_by_client.get()
    return Caller(
        token_id=asker.pk if asker is not None else None,
        cancel_groups=(calls.call_group(asker.pk, request_id),) if asker is not None else (),
        on_cancel=cancelled.set if cancelled is not None else None,
        transport_cancel=lambda: mcp_state.stdio_cancel_reasons.pop(request_id, None),
        cancel_after_close=calls.cancellable_by_notification.get(),
        progress=progress if has_progress_token(ctx) else None,
    )


async def result_of(final: Question, ctx: Context, tool: str) -> CallToolResult:
    """The tool result for a question a wait gave back; an answer is marked as handed over once it is sent."""
    if final.status == Status.ANSWERED:
        deliveries = calls.pending_deliveries.get()
        if deliveries is None:
            await database_sync_to_async(final.mark_delivered)()
        else:
            deliveries.append(final.pk)
    can_wait = final.status == Status.PENDING and await offers(ctx, "wait_for_answer")
    images: list[AnswerImage] = []
    if final.status == Status.ANSWERED and final.answer.image_count:
        images = await database_sync_to_async(AnswerImage.objects.for_question)(final.pk)
    return outcome(final, tool, can_wait_for_answer=can_wait, images=images)


async def wait(question: Question, ctx: Context, asker: AgentToken | None, tool: str) -> CallToolResult:
    """Block on a question that exists (wait_for_answer) until it is resolved (or the hold runs out)."""
    caller = call_caller(ctx, asker, Progress(ctx))
    policy = WaitPolicy.from_settings(with_progress=has_progress_token(ctx))
    return await result_of(await wait_for_resolution(question.pk, policy, caller), ctx, tool)


async def open_dashboard_if_unwatched(question: Question) -> str | None:
    """Open the question in the browser if nobody has a dashboard open (stdio by default, serve --open).

    Over stdio the dashboard is a `serve` process on the same database: the question opens
    at the address it listens on (core.presence). Returns a note for the agent (and
    so the user) when it could not be opened.
    """
    if not settings.HOOKBRIDGE_OPEN_BROWSER:
        return None
    others = await asyncio.to_thread(presence.servers)
    if dashboards.open_dashboards + sum(server.dashboards for server in others) > 0:
        return None
    base = others[0].url if others else settings.HOOKBRIDGE_PUBLIC_URL
    url = f"{base}/questions/{question.pk}/"
    if mcp_state.stdio and not others:
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


@contextmanager
def waiting_slot(asker: AgentToken | None) -> Iterator[None]:
    """One of the token's waiting calls, for a wait on a question that exists (wait_for_answer)."""
    if asker is None:  # stdio: one client per process
        yield
        return
    try:
        with questions_asking.waiting_slot(asker.pk, what="calls waiting for a person with this token"):
            yield
    except OverLimit as exc:  # raised only on the way in: the body never takes a second slot
        raise ToolError(str(exc)) from None


async def ask_in_background(
    write: Callable[[uuid.UUID, bool], tuple[Question, bool]],
    asker: AgentToken | None,
    tool: str,
    background: calls.Background,
) -> str:
    """Write the question (or re-attach the agent's identical one) and its task, and wait for nothing: the id of
    the task, once both rows are committed (a tasks/get for it must find it, on any worker)."""
    if asker is not None:
        try:
            questions_asking.ask_allowance(asker.pk)
        except RateLimited as exc:
            raise ToolError(str(exc)) from None

    def written() -> str:
        question, reattached = write(uuid.uuid4(), True)
        how = "re-attached" if reattached else "new"
        logger.info("%s %s from %s as a task (%s)", question.kind, question.pk, question.asker_name, how)
        token_id = asker.pk if asker is not None else None
        task = AskTask.open(
            question, token_id, tool, offered_to_client=background.offer_to_client, client=background.client
        )
        if task.input_wanted:
            question.offer_in_client()
        return str(task.pk)

    try:
        task_id: str = await database_sync_to_async(written)()
        return task_id
    except RateLimited as exc:
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
    requirement: dict[str, Any] | None = None,
) -> CallToolResult:
    """An asking tool's call: questions.asking's ask, told of this call's cancels and progress, read as a result."""
    asker, asker_name = caller()
    progress = Progress(ctx)
    note: str | None = None

    def write(new_id: uuid.UUID, in_background: bool = False) -> tuple[Question, bool]:
        return Question.ask(
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
            in_background=in_background,
            requirement=requirement,
        )

    async def written(question: Question, reattached: bool) -> None:
        nonlocal note
        logger.info("%s %s from %s (%s)", kind, question.pk, asker_name, "re-attached" if reattached else "new")
        note = None if reattached else await open_dashboard_if_unwatched(question)
        if note:
            # At once, not only in the result: as progress to a client that asked for it, else as a log message.
            if has_progress_token(ctx):
                await progress(0, note)
            else:
                await client_log.ClientLog(ctx, logger_name="hookbridge")("warning", note)

    background = calls.background.get()
    if background is not None and kind != Kind.APPROVAL:
        background.task_id = await ask_in_background(write, asker, tool, background)
        return CallToolResult(content=[])  # mcpapi.tasks answers the call with the task instead
    policy = WaitPolicy.from_settings(with_progress=has_progress_token(ctx))
    try:
        asked = await questions_asking.ask_and_wait(
            write, policy, call_caller(ctx, asker, progress), on_written=written
        )
    except (OverLimit, RateLimited) as exc:  # raised before anything waits: the call fails, naming the limit
        raise ToolError(str(exc)) from None
    result = await result_of(asked.question, ctx, tool)
    if note:
        result.content.append(TextContent(type="text", text=note))
    return result
