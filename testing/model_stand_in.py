"""A scripted stand-in for the model API, so the real Claude Code CLI runs offline in a test.

It speaks the Messages API's streaming form as the CLI reads it. A request that offers
the Bash tool and has no tool result yet gets one `tool_use` of Bash running COMMAND;
once the CLI sends the tool's result back, the reply is plain text naming what the tool
said. Any other request (the CLI's side calls: titles, summaries) gets a short text.
Every request body is appended to REQUESTS_FILE as one JSON line, for the test to read.

    python -m testing.model_stand_in PORT COMMAND REQUESTS_FILE
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            found += [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]
    return found


# Each CLI's shell tool, and its input for one command: Claude Code's `Bash`, Copilot CLI's `bash`, Cline's
# `run_commands` (its SDK's: several commands in one call) and `execute_command` (its older tool).
SHELL_TOOLS: dict[str, Callable[[str], dict[str, Any]]] = {
    "Bash": lambda command: {"command": command, "description": "Run the scripted command"},
    "bash": lambda command: {"command": command, "description": "Run the scripted command"},
    "run_commands": lambda command: {"commands": [command]},
    "execute_command": lambda command: {"command": command, "requires_approval": True},
}


def _shell_tool(body: dict[str, Any]) -> str | None:
    """The shell tool the request offers (SHELL_TOOLS)."""
    for tool in body.get("tools", []):
        if isinstance(tool, dict) and tool.get("name") in SHELL_TOOLS:
            return str(tool["name"])
    return None


def _result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, list):
        return " ".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return str(content)


def _offers(body: dict[str, Any], name: str) -> bool:
    return any(isinstance(tool, dict) and tool.get("name") == name for tool in body.get("tools", []))


def reply_blocks(body: dict[str, Any], command: str) -> tuple[list[dict[str, Any]], str]:
    """(content blocks, stop reason) for one request.

    COMMAND "mcp:<tool>:<JSON input>" asks for that (MCP) tool instead of Bash: "mcp:mcp__hookbridge__ask_question:
    {"question": "…"}".
    """
    results = _tool_results(body)
    if command.startswith("mcp:"):
        tool, _, arguments = command.removeprefix("mcp:").partition(":")
        if _offers(body, tool) and not results:
            asked: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": tool}
            return [{**asked, "input": json.loads(arguments)}], "tool_use"
    elif (shell := _shell_tool(body)) and not results:
        tool_use = {
            "type": "tool_use",
            "id": f"toolu_{uuid.uuid4().hex[:24]}",
            "name": shell,
            "input": SHELL_TOOLS[shell](command),
        }
        return [tool_use], "tool_use"
    if results:
        said = _result_text(results[-1])
        error = " (error)" if results[-1].get("is_error") else ""
        return [{"type": "text", "text": f"The tool said{error}: {said}"}], "end_turn"
    return [{"type": "text", "text": "Scripted reply"}], "end_turn"


async def _stream(blocks: list[dict[str, Any]], stop: str, model: str) -> AsyncIterator[bytes]:
    message: dict[str, Any] = {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    yield _event("message_start", {"type": "message_start", "message": message})
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            yield _event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            yield _event("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield _event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _event(
        "message_delta",
        {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}},
    )
    yield _event("message_stop", {"type": "message_stop"})


def build(command: str, requests_file: Path) -> Starlette:
    async def messages(request: Request) -> Response:
        body = await request.json()
        with requests_file.open("a") as log:
            log.write(json.dumps(body) + "\n")
        blocks, stop = reply_blocks(body, command)
        model = str(body.get("model", "claude-stand-in"))
        if body.get("stream"):
            return StreamingResponse(_stream(blocks, stop, model), media_type="text/event-stream")
        return JSONResponse(
            {
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        )

    async def count_tokens(request: Request) -> Response:
        return JSONResponse({"input_tokens": 10})

    async def anything(request: Request) -> Response:
        return JSONResponse({})

    return Starlette(
        routes=[
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
            Route("/{path:path}", anything, methods=["GET", "POST"]),
        ]
    )


if __name__ == "__main__":
    port, command, requests_file = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    uvicorn.run(build(command, requests_file), host="127.0.0.1", port=port, log_level="warning")
