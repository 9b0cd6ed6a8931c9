"""Building the Hook Bridge MCP server for a combination of tool sets, served stateless over SSE."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl

from hookbridge_site.db import database_sync_to_async
from mcpapi import calls, toolsets
from tokens.models import AgentToken, digest

logger = logging.getLogger(__name__)


class TokenVerifier:
    """Bearer tokens are AgentToken rows, looked up by digest."""

    async def verify_token(self, token: str) -> AccessToken | None:
        known = calls.verified_token.get()
        if known is not None and known[0] == token:
            agent = known[1]
        else:
            agent = await database_sync_to_async(AgentToken.authenticate)(token)
        if agent is None:
            return None
        return access_token(agent, token)


def access_token(agent: AgentToken, raw: str) -> AccessToken:
    """What the SDK's auth context holds for a caller, over HTTP and over stdio alike."""
    # The digest, not the raw token: nothing downstream needs the secret.
    return AccessToken(token=digest(raw), client_id=str(agent.pk), scopes=[], claims={"name": agent.name})


async def log_requests(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """HOOKBRIDGE_DEBUG: one debug line for every inbound request, tool calls with their arguments."""
    if logger.isEnabledFor(logging.DEBUG):
        params = dict(ctx.params or {})
        if ctx.method == "tools/call":
            logger.debug("tool call %s %s (request %s)", params.get("name"), params.get("arguments"), ctx.request_id)
        else:
            logger.debug("%s (request %s)", ctx.method, ctx.request_id)
    return await call_next(ctx)


def build_server(sets: Iterable[str]) -> MCPServer:
    sets = tuple(sets)
    server: MCPServer = MCPServer(
        "hookbridge",
        instructions=toolsets.instructions(sets),
        version="0.1.0",
        token_verifier=TokenVerifier(),
        auth=AuthSettings(issuer_url=AnyHttpUrl(settings.HOOKBRIDGE_PUBLIC_URL), resource_server_url=None),
        log_level="WARNING",
        middleware=[log_requests],
    )
    for tool in toolsets.tools(sets):
        server.add_tool(
            tool.fn, name=tool.name, title=tool.title, description=tool.description, annotations=tool.annotations
        )
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
