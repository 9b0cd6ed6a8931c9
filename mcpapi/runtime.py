"""What the MCP server keeps in this process (mcp_stdio writes it; mcpapi.asking reads it)."""

from __future__ import annotations

# mcp_stdio: this process serves one client over stdio and has no web server of its own
# (the dashboard to answer on is a `serve` process: core.presence).
stdio = False
# stdio: the SDK applies a client's notifications/cancelled itself, by cancelling the handler;
# mcp_stdio notes its reason here first (request id -> reason), so the call can tell an abort
# from a timeout. One client per stdio process, so the ids are unique.
stdio_cancel_reasons: dict[str, str] = {}
