"""The approvals set: Claude Code's permission-prompt tool for headless runs (`--permission-prompt-tool`).

`claude -p … --permission-prompt-tool mcp__<server>__approve` calls `approve` before each tool use
that needs permission, and reads the text content as JSON: {"behavior": "allow", "updatedInput": {…}}
or {"behavior": "deny", "message": "…"}. The call blocks like ask_question (keep-alive, cancellation,
re-attach); the team's rules decide first, as they do for the PermissionRequest hook; a hook and this
tool asking about the same tool use at once share one approval, and the first decision answers both.
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

from django.conf import settings
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import Field, StrictStr

from approvals import policies
from approvals import rules as policy
from core.db import database_sync_to_async
from hosts import service
from hosts.hook_calls import summarise
from mcpapi.asking import ask_and_wait, caller
from mcpapi.toolsets.entries import Toolset
from projects.models import Project
from questions.decisions import Decision
from questions.kinds import Kind


def _decision(payload: dict[str, Any]) -> CallToolResult:
    # One text block and nothing else: Claude Code (2.1.331) refuses a result that also carries
    # structuredContent ("Permission prompt tool returned an invalid result. Expected a single text
    # block …") and then fails the tool use, whatever the decision said.
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))])


async def approve(
    tool_name: Annotated[
        StrictStr, Field(min_length=1, max_length=200, description="The tool the agent wants to use.")
    ],
    input: Annotated[dict[str, Any], Field(description="The input it wants to run the tool with.")],
    ctx: Context,
    tool_use_id: Annotated[
        StrictStr | None, Field(max_length=200, description="The host's id for this tool use.")
    ] = None,
) -> CallToolResult:
    """Ask the team whether a tool use may run; blocks until a person (or a team rule) decides.

    Returns JSON text: {"behavior": "allow", "updatedInput": {...}} or {"behavior": "deny", "message": "..."}.
    """
    started = time.perf_counter()
    asker, asker_name = caller()
    payload: dict[str, Any] = {
        "event": "permission-prompt-tool",
        "tool_name": tool_name,
        "tool_input": input,
        "permission_suggestions": [],
        "tool_use_id": tool_use_id,
        "cwd": "",
    }
    payload["digest"] = policies.digest(tool_name, input, "")
    summary = summarise(tool_name, input)
    project_id = asker.project_id if asker is not None else None
    ruled = await policy.decide_by_rule(tool_name, input, "", since=started, project_id=project_id)
    if ruled is not None:
        record = service.record_rule_decision
        question = await database_sync_to_async(record)(asker, asker_name, payload, None, summary, ruled)
        kind = question.kind_spec
        return _decision(kind.structured_result(question, question.answer.data))
    use = policies.ToolUse(
        project_id=await database_sync_to_async(Project.for_agent)(project_id),
        host="permission-prompt-tool",
        tool_name=tool_name,
        tool_input=input,
        cwd="",
        token_id=asker.pk if asker is not None else None,
    )
    needs = await database_sync_to_async(policies.requirement)(use, asker)
    result = await ask_and_wait(
        ctx,
        tool="approve",
        kind=Kind.APPROVAL,
        text=service.approval_text(tool_name, summary),
        allow_free_text=False,
        payload=payload,
        # A policy's own timeout ends the wait: its fallback decides (Question.time_out).
        timeout=needs.get("timeout") or settings.HOOKBRIDGE_QUESTION_TIMEOUT,
        key=service.approval_key(tool_name, input),
        requirement=needs,
    )
    structured = result.structured_content or {}
    if Decision.of(structured) is not None:
        return _decision(structured)
    # No decision (still pending, timed out, withdrawn): the host needs a decision it can parse.
    said = str(structured.get("message") or "No decision came from Hook Bridge.")
    return _decision(Decision.deny(f"No decision from the team yet: {said}").as_dict())


TOOLSET = Toolset(
    name="approvals",
    tools=(("approve", approve),),
    asks=True,
    asking=frozenset({"approve"}),
    instructions=(
        "approve is Claude Code's permission-prompt tool: the host calls it before a tool use that needs "
        "permission, and a person on the team (or a team rule) allows, edits or denies it."
    ),
)
