"""In-flight tool calls: how a cancellation finds the call it is meant for."""

from __future__ import annotations

import asyncio
import hashlib
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpapi.models import AgentToken

# Set when the server is going down: calls cancelled then are left pending, so
# the agent re-attaches to its question on another worker or after the restart.
shutting_down = asyncio.Event()


def call_group(token_id: int | str, request_id: str) -> str:
    """The channel-layer group of one in-flight call, keyed by (token, JSON-RPC request id)."""
    key = hashlib.sha256(f"{token_id}:{request_id}".encode()).hexdigest()[:40]
    return f"mcpcall.{key}"


# (raw token, the token it authenticated as) for the request in hand: the /mcp
# router looks the token up once, and the SDK's verifier reuses the result.
verified_token: ContextVar[tuple[str, AgentToken | None] | None] = ContextVar("verified_token", default=None)

# Who asks when there is no token (stdio without --token): set by mcp_stdio.
local_asker_name: ContextVar[str] = ContextVar("local_asker_name", default="local agent")
