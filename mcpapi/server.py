"""Building the Hook Bridge MCP server for a combination of tool sets, served stateless over SSE."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    SetLevelRequestParams,
)
from pydantic import AnyHttpUrl, ValidationError

from core import jsonapi
from core.compat import mcp_sdk
from mcpapi import calls, client_log, tasks, toolsets
from tokens import cache as token_cache
from tokens.models import AgentToken, digest

logger = logging.getLogger(__name__)

VERSION = "0.1.0"


class TokenVerifier:
    """Bearer tokens are AgentToken rows, looked up by digest."""

    async def verify_token(self, token: str) -> AccessToken | None:
        known = calls.verified_token.get()
        if known is not None and known[0] == token:
            agent = known[1]
        else:
            agent = await token_cache.authenticate(token)
        if agent is None:
            return None
        return access_token(agent, token)


def access_token(agent: AgentToken, raw: str) -> AccessToken:
    """What the SDK's auth context holds for a caller, over HTTP and over stdio alike."""
    # The digest, not the raw token: nothing downstream needs the secret.
    claims = {"name": agent.name, "project": agent.project_id, "background": agent.may_ask_in_background}
    return AccessToken(token=digest(raw), client_id=str(agent.pk), scopes=[], claims=claims)


async def log_requests(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """HOOKBRIDGE_DEBUG: one debug line for every inbound request, tool calls with their arguments."""
    if logger.isEnabledFor(logging.DEBUG):
        params = dict(ctx.params or {})
        if ctx.method == "tools/call":
            logger.debug("tool call %s %s (request %s)", params.get("name"), params.get("arguments"), ctx.request_id)
        else:
            logger.debug("%s (request %s)", ctx.method, ctx.request_id)
    return await call_next(ctx)


class HookBridgeServer(MCPServer):
    """The SDK's server, with prompt errors a client can act on.

    The SDK turns every prompt error into a ValueError, which reaches the client as
    "MCP error 0"; an unknown prompt or a bad argument is the caller's mistake: -32602.
    """

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Any = None
    ) -> GetPromptResult | InputRequiredResult:
        prompt = mcp_sdk.prompt(self, name)
        if prompt is None:
            known = ", ".join(mcp_sdk.prompt_names(self)) or "none"
            raise MCPError(INVALID_PARAMS, f"name: unknown prompt {name!r}; prompts here: {known}")
        missing = sorted(a.name for a in prompt.arguments or [] if a.required and a.name not in (arguments or {}))
        if missing:
            raise MCPError(INVALID_PARAMS, f"arguments.{missing[0]}: required by the prompt {name!r}")
        try:
            return await super().get_prompt(name, arguments, context)
        except ValueError as exc:
            invalid: BaseException | None = exc
            while invalid is not None and not isinstance(invalid, ValidationError):
                invalid = invalid.__cause__
            if invalid is None:
                raise
            raise MCPError(INVALID_PARAMS, describe(invalid)) from None

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult | InputRequiredResult:
        """Refuse what the database cannot store, and name each bad argument without echoing its value."""
        problem = jsonapi.unstorable(arguments, "arguments.")
        if problem is not None:
            raise ToolError(f"Invalid arguments for {name}: {problem}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if _caused_by_the_database(exc):
                # The token was known without a query (tokens.cache), so an outage shows here, not at the door.
                logger.exception("The database is unreachable")
                raise MCPError(INTERNAL_ERROR, DATABASE_DOWN) from None
            if isinstance(exc, UnexpectedToolError):
                raise  # a bug: the SDK logs it with its traceback
            # The SDK's text starts "Error executing tool <name>: ", and for a validation error it
            # repeats each rejected value (up to 1 MB). The caller gets what is wrong, by name.
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(f"Invalid arguments for {name}: {describe(exc.__cause__)}") from exc.__cause__
            raise ToolError(str(exc).removeprefix(f"Error executing tool {name}: ")) from exc.__cause__


DATABASE_DOWN = "Hook Bridge cannot reach its database right now; try again shortly."


def _caused_by_the_database(exc: BaseException) -> bool:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, DatabaseError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def describe(invalid: ValidationError) -> str:
    """Each problem as "arguments.<name>: <what is wrong>", without the value that was sent."""
    return "; ".join(
        f"arguments.{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
        for error in invalid.errors(include_url=False, include_input=False)
    )


def build_server(sets: Iterable[str]) -> MCPServer:
    sets = tuple(sets)
    name = toolsets.server_name(sets)
    server: MCPServer = HookBridgeServer(
        name,
        instructions=toolsets.instructions(sets, settings.HOOKBRIDGE_TASKS),
        version=VERSION,
        token_verifier=TokenVerifier(),
        auth=AuthSettings(issuer_url=AnyHttpUrl(settings.HOOKBRIDGE_PUBLIC_URL), resource_server_url=None),
        log_level="WARNING",
        middleware=[log_requests],
        # Nothing here changes while a process runs (the tools, prompts and resources are fixed at start),
        # so there is nothing to listen for: without this, server/discover claimed listChanged and
        # resources.subscribe, which initialize (rightly) denied.
        subscriptions=False,
        # Listed in server/discover only where the team lets questions go to the background (mcpapi.tasks).
        extensions=[tasks.TasksExtension()] if settings.HOOKBRIDGE_TASKS != "off" else [],
    )
    mcp_sdk.add_request_handler(server, "logging/setLevel", SetLevelRequestParams, client_log.set_level)
    for tool in toolsets.tools(sets):
        server.add_tool(
            tool.fn, name=tool.name, title=tool.title, description=tool.description, annotations=tool.annotations
        )
    if settings.HOOKBRIDGE_TASKS == "allowed":
        # Approvals stay synchronous gates: their tools never offer the background.
        for name in toolsets.asking_tool_names(sets) - toolsets.TOOLSETS["approvals"].asking:
            if (registered := mcp_sdk.tool(server, name)) is not None:
                tasks.offer_background_argument(registered.parameters)
    for name, prompt in toolsets.prompts(sets):
        server.add_prompt(Prompt.from_function(prompt, name=name))
    return server


def build_http_app(sets: Iterable[str]) -> tuple[Any, Any]:
    server = build_server(sets)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=False,
        max_request_body_size=settings.HOOKBRIDGE_MAX_BODY_BYTES,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=settings.HOOKBRIDGE_MCP_ALLOWED_HOSTS,
            allowed_origins=settings.HOOKBRIDGE_MCP_ALLOWED_ORIGINS,
        ),
    )
    return app, server.session_manager
