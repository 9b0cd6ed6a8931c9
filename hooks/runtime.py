"""What the hooks app keeps in this process."""

from __future__ import annotations

from collections.abc import Callable

# Tool names a hook may not take: the MCP server's own, as a function handed in once by mcpapi's
# AppConfig.ready() through hooks.config.reserve_tool_names, and called by hooks.config.discovered().
reserved_tool_names: Callable[[], frozenset[str]] = frozenset
