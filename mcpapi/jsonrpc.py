"""The JSON-RPC checks a /mcp body passes before the SDK sees it, each error naming its field.

Shared by the HTTP router (mcpapi.http) and the stdio entry (mcp_stdio), so both transports
word a bad message the same way.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from mcp_types import PROTOCOL_VERSION_META_KEY
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import Message

from core import jsonapi


def carries_a_response(message: Message) -> bool:
    """Whether an SSE body chunk holds a JSON-RPC response (the stream's one answer), not a notification."""
    for line in bytes(message.get("body", b"")).splitlines():
        if line.startswith(b"data:"):
            try:
                event = json.loads(line[5:])
            except ValueError:
                continue
            if isinstance(event, dict) and "method" not in event and ("result" in event or "error" in event):
                return True
    return False


def unsupported_version(
    version: str, messages: list[Any], *, handshake_session: bool
) -> tuple[int, dict[str, Any]] | None:
    """The 400 for an MCP-Protocol-Version this server does not speak, in the words of the caller's era.

    The SDK sends every version outside the handshake's to the 2026-07-28 entry, whose first
    check is its envelope: a handshake-era client that sent a version of its own was told about
    envelope keys it never heard of. A connection that began with initialize, or a message with
    no envelope, is that era's, and is told which versions it may send. A message with the
    envelope goes on to the SDK, whose rejection lists the 2026 versions in that era's shape.
    """
    enveloped = any(
        isinstance(message, dict)
        and isinstance(message.get("params"), dict)
        and isinstance(message["params"].get("_meta"), dict)
        and PROTOCOL_VERSION_META_KEY in message["params"]["_meta"]
        for message in messages
    )
    if enveloped and not handshake_session:
        return None
    supported = list(HANDSHAKE_PROTOCOL_VERSIONS)
    said = f"MCP-Protocol-Version: {version[:40]!r} is not supported; send one of {', '.join(supported)}"
    error = error_body(-32600, said)
    error["error"]["data"] = {"supported": supported, "requested": version[:40]}
    return 400, error


def jsonrpc_problem(body: bytes, tool_names: Collection[str] | None = None) -> tuple[int, dict[str, Any]] | None:
    """(HTTP status, JSON-RPC error) for a body the SDK must not see; None lets it go on."""
    return checked_messages(body, tool_names)[1]


def checked_messages(
    body: bytes, tool_names: Collection[str] | None = None
) -> tuple[list[Any], tuple[int, dict[str, Any]] | None]:
    """The messages of a body, parsed once, and the (HTTP status, JSON-RPC error) to answer instead
    of handing the body to the SDK, if any.

    JSON that would crash a parser; a batch (the SDK answered with a dump of its validator's
    internals); a request id that is neither a string nor an integer (the SDK would drop the
    request without a word); a tools/call whose name or arguments are not what the SDK can read,
    or names a tool this endpoint lacks (`tool_names`; the SDK made that a tool result, not the
    protocol error the specification names); text no database holds, which the SDK's parser
    refuses without naming the argument (half a surrogate pair, NaN). A NUL goes on: the server's
    call_tool refuses it as a tool error, which a model reads and corrects.
    """
    if not body.lstrip().startswith((b"{", b"[")):
        return [], None  # not JSON at all: the SDK's own parse error says so
    constants: list[str] = []
    try:
        payload = jsonapi.loads(body, constants=constants)
    except jsonapi.BadJSON as exc:
        return [], (400, error_body(-32700, f"Parse error: the body {exc}"))
    if isinstance(payload, list):
        batch = "Invalid Request: a batch (a JSON array of messages) is not served; send one JSON-RPC message a request"
        return [], (400, error_body(-32600, batch))
    messages = [payload]
    for message in messages:
        if isinstance(message, dict) and "method" in message and "id" in message:
            request_id = message["id"]
            if isinstance(request_id, bool) or not isinstance(request_id, str | int):
                shown = json.dumps(request_id)[:40]
                said = f"Invalid Request: id must be a string or an integer, not {shown}"
                return messages, (400, error_body(-32600, said))
    for message in messages:
        is_call = isinstance(message, dict) and message.get("method") == "tools/call" and "id" in message
        if is_call and (wrong := tool_call_problem(message.get("params"), tool_names)) is not None:
            error = {"code": -32602, "message": wrong}
            return messages, (200, {"jsonrpc": "2.0", "id": message["id"], "error": error})
    for message in messages:
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and (problem := jsonapi.unstorable(params, nul=False)):
            error = {"code": -32602, "message": f"Invalid params: {problem}"}
            return messages, (200, {"jsonrpc": "2.0", "id": message.get("id"), "error": error})
    if constants:  # outside any params: nothing to name
        said = f"Parse error: {constants[0]} is not a JSON number; send a finite number or null"
        return messages, (400, error_body(-32700, said))
    return messages, None


def tool_call_problem(params: Any, tool_names: Collection[str] | None) -> str | None:
    """What is wrong with a tools/call's params, naming the field; None when the SDK may have it."""
    if not isinstance(params, dict):
        return "Invalid params: params must be an object with the tool's name and its arguments"
    name = params.get("name")
    if not isinstance(name, str):
        return f"Invalid params: name must be a string naming the tool to call, not {json.dumps(name)[:40]}"
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        kind = {str: "a string", list: "an array", bool: "a boolean"}.get(type(arguments), "a number")
        return f"Invalid params: arguments must be an object of the tool's arguments by name, not {kind}"
    if tool_names is not None and name not in tool_names:
        return f"Unknown tool: {name[:100]!r}; tools here: {', '.join(sorted(tool_names))}"
    return None


def called_tool(message: Any) -> str | None:
    """The tool a tools/call request names; None for any other message."""
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return name if isinstance(name, str) else None


def is_initialize(messages: list[Any]) -> bool:
    return any(
        isinstance(message, dict) and message.get("method") == "initialize" and "id" in message for message in messages
    )


def cancellations(messages: list[Any]) -> list[tuple[str, str]]:
    """(request id, reason) of each notifications/cancelled among a POST's messages; reason "" when none was given."""
    found = []
    for message in messages:
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict) and params.get("requestId") is not None:
                reason = params.get("reason")
                found.append((str(params["requestId"]), reason if isinstance(reason, str) else ""))
    return found


def error_body(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
