"""What the hooks app keeps in this process."""

from __future__ import annotations

# Tool names a hook may not take: the MCP server's own, handed in once by mcpapi's AppConfig.ready()
# through hooks.config.reserve_tool_names; read by hooks.config.discovered().
reserved_tool_names: frozenset[str] = frozenset()
