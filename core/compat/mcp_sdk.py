"""The `mcp` SDK's MCPServer internals: its low-level server, and its prompt manager.

- `lowlevel`: MCPServer.run_stdio_async offers no way to put anything between the stdio streams
  and the server; mcp_stdio runs the low-level server itself, with its cancel tap and line checks
  in between. The low-level server is also where a request handler for a method MCPServer does
  not serve (logging/setLevel) is added.
- `prompt` / `prompt_names`: MCPServer turns every prompt error into a ValueError ("MCP error 0");
  an unknown prompt or a missing argument is looked up first so it can be -32602 naming the field.
- `tool`: a registered tool, whose listed input schema gains an argument the function never sees
  (`background`, read by the Tasks extension's interceptor before the tool runs).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts import Prompt
from mcp.server.mcpserver.tools import Tool


def lowlevel(server: MCPServer) -> Server[Any]:
    found: Server[Any] = server._lowlevel_server
    return found


def add_request_handler(
    server: MCPServer, method: str, params: type[Any], handler: Callable[..., Awaitable[Any]]
) -> None:
    lowlevel(server).add_request_handler(method, params, handler)


def prompt(server: MCPServer, name: str) -> Prompt | None:
    found: Prompt | None = server._prompt_manager.get_prompt(name)
    return found


def prompt_names(server: MCPServer) -> list[str]:
    return sorted(p.name for p in server._prompt_manager.list_prompts())


def tool(server: MCPServer, name: str) -> Tool | None:
    found: Tool | None = server._tool_manager.get_tool(name)
    return found
