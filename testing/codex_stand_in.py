"""A scripted stand-in for the OpenAI Responses API, so the real Codex CLI runs offline in a test.

Codex (a `[model_providers.*]` entry with `wire_api = "responses"`) POSTs `/responses` and reads a stream of
server-sent events. A request that offers a shell tool (`exec_command`, or the older `shell`) and carries no
tool output yet gets one call running COMMAND; once Codex sends the call's output back, the reply is a message
saying what the tool said (so a test reads what the model was told: the output, or why the command was
refused). COMMAND "mcp:<tool>:<JSON arguments>" calls that (MCP) tool instead, once Codex offers it. Every
request body is appended to REQUESTS_FILE as one JSON line.

    python -m testing.codex_stand_in PORT COMMAND REQUESTS_FILE
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


def _tool_names(body: dict[str, Any]) -> set[str]:
    """The tools offered, an MCP server's by `<namespace>__<tool>` (Codex offers them in a namespace each)."""
    names = set()
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            names.add(str(tool.get("name") or ""))
            for inner in tool.get("tools") or [] if tool.get("type") == "namespace" else []:
                names.add(f"{tool.get('name')}__{inner.get('name')}")
    return names


def _outputs(body: dict[str, Any]) -> list[str]:
    found = []
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            found.append(output if isinstance(output, str) else json.dumps(output, ensure_ascii=False))
    return found


def reply_items(body: dict[str, Any], command: str) -> list[dict[str, Any]]:
    outputs = _outputs(body)
    if outputs:
        return [_message(f"The tool said: {outputs[-1]}")]
    offered = _tool_names(body)
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    if command.startswith("mcp:"):
        tool, _, arguments = command.removeprefix("mcp:").partition(":")
        if tool in offered:
            call = {"type": "function_call", "name": tool, "arguments": arguments, "call_id": call_id}
            namespace, _, name = tool.rpartition("__")
            if namespace in offered:  # an MCP server's tool: called by its name within the server's namespace
                call.update(name=name, namespace=namespace)
            return [call]
    elif "exec_command" in offered:
        # Asked outside the sandbox, as a model does for a write it needs: Codex then asks for approval.
        escalated = {"cmd": command, "sandbox_permissions": "require_escalated", "justification": "Make the file"}
        arguments = json.dumps(escalated)
        return [{"type": "function_call", "name": "exec_command", "arguments": arguments, "call_id": call_id}]
    elif "shell" in offered:
        arguments = json.dumps({"command": ["bash", "-lc", command], "with_escalated_permissions": True})
        return [{"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call_id}]
    return [_message("Scripted reply")]


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "id": f"msg_{uuid.uuid4().hex[:12]}",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _event(kind: str, **fields: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()


async def _stream(items: list[dict[str, Any]]) -> AsyncIterator[bytes]:
    response_id = f"resp_{uuid.uuid4().hex[:12]}"
    yield _event("response.created", response={"id": response_id})
    for item in items:
        yield _event("response.output_item.done", item=item)
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    yield _event("response.completed", response={"id": response_id, "usage": usage})


def build(command: str, requests_file: Path) -> Starlette:
    async def responses(request: Request) -> Response:
        body = await request.json()
        with requests_file.open("a") as log:
            log.write(json.dumps(body) + "\n")
        return StreamingResponse(_stream(reply_items(body, command)), media_type="text/event-stream")

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [], "models": []})

    async def anything(request: Request) -> Response:
        return JSONResponse({})

    return Starlette(
        routes=[
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/responses", responses, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/models", models, methods=["GET"]),
            Route("/{path:path}", anything, methods=["GET", "POST"]),
        ]
    )


if __name__ == "__main__":
    port, command, requests_file = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    uvicorn.run(build(command, requests_file), host="127.0.0.1", port=port, log_level="warning")
