"""The hooks set: one tool per hook found under HOOKBRIDGE_PLUGINS_DIR; hooks.service runs and records it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, StrictBool, StrictStr

from core.errors import Refused
from hooks import service
from hooks.config import Hook, discovered
from mcpapi import calls, client_log
from mcpapi.asking import caller, has_progress_token
from mcpapi.toolsets.entries import ToolEntry, Toolset

Verbose = Annotated[
    StrictBool, Field(description="Include the output of every directory, not only of those that failed.")
]
FailFast = Annotated[StrictBool, Field(description="Stop at the first directory that fails.")]
Directory = Annotated[
    StrictStr,
    Field(
        max_length=1024,
        description="Run only under this folder: a path inside the workspace, relative to its root ('.': all of it).",
    ),
]


async def execute(hook: Hook, ctx: Context, *, verbose: bool, fail_fast: bool, directory: str) -> CallToolResult:
    token, caller_name = caller()

    async def progress(value: float, message: str) -> None:
        await ctx.report_progress(value, None, message)

    client = client_log.ClientLog(ctx, logger_name=hook.tool_name)

    async def log(line: str) -> None:
        await client("info", line)

    try:
        outcome = await service.run_hook(
            hook,
            caller=token,
            caller_name=caller_name,
            verbose=verbose,
            fail_fast=fail_fast,
            directory=directory,
            progress=progress if has_progress_token(ctx) else None,
            log=log,
            cancel_scope=lambda: calls.cancel_scope_for_call(token.pk if token else None, ctx.request_id),
        )
    except Refused as exc:
        raise ToolError(str(exc)) from None
    return CallToolResult(
        content=[TextContent(type="text", text=outcome.text)],
        structured_content=outcome.payload,
        is_error=outcome.failed,
    )


def _tool_for(hook: Hook) -> Callable[..., Any]:
    async def run_hook(
        ctx: Context,
        verbose: Verbose = False,
        failFast: FailFast = True,  # the camelCase argument names, as han's tools have them
        directory: Directory = ".",
    ) -> CallToolResult:
        return await execute(hook, ctx, verbose=verbose, fail_fast=failFast, directory=directory)

    return run_hook


def tools() -> list[ToolEntry]:
    return [
        ToolEntry(
            name=hook.tool_name,
            fn=_tool_for(hook),
            title=hook.title,
            description=hook.tool_description(),
            annotations=ToolAnnotations.model_validate(hook.annotations.model_dump()),
        )
        for hook in discovered().hooks.values()
    ]


TOOLSET = Toolset(
    name="hooks",
    tools=tools,
    server_name="han",  # what the original called itself, for clients that key on it
    instructions="Each tool here runs one of the team's checks in the workspace and says which folders passed.",
)
