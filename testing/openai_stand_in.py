"""A scripted stand-in for OpenAI's Chat Completions API, so a CLI that speaks it (Cline's openai-compatible
provider) runs offline in a test.

A request that offers a shell tool (testing.model_stand_in.SHELL_TOOLS) and has no tool result yet gets one call of
it running COMMAND; once the CLI sends the tool's result back, the reply is text naming what the tool said (and,
where the CLI offers one, its tool for ending the task). Every request body is appended to REQUESTS_FILE as one
JSON line, for the test to read.

    python -m testing.openai_stand_in PORT COMMAND REQUESTS_FILE
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from testing.model_stand_in import SHELL_TOOLS

# Tools a CLI offers for saying the task is done: called after the shell's result, so the CLI's run ends.
DONE_TOOLS = {"attempt_completion": "result", "submit_and_exit": "summary"}


def _offered(body: dict[str, Any]) -> list[str]:
    return [
        str(tool["function"]["name"])
        for tool in body.get("tools", [])
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict)
    ]


def _results(body: dict[str, Any]) -> list[str]:
    return [str(message.get("content")) for message in body.get("messages", []) if message.get("role") == "tool"]


def reply(body: dict[str, Any], command: str) -> tuple[str, list[dict[str, Any]]]:
    """(text, tool calls) for one request."""
    offered, results = _offered(body), _results(body)
    shell = next((name for name in offered if name in SHELL_TOOLS), None)
    if shell and not results:
        return "", [_call(shell, SHELL_TOOLS[shell](command))]
    if results:
        said = f"The tool said: {results[-1][:2000]}"
        done = next((name for name in offered if name in DONE_TOOLS), None)
        return said, [_call(done, {DONE_TOOLS[done]: said})] if done else []
    return "Scripted reply", []


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{uuid.uuid4().hex[:24]}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> bytes:
    said = {
        "id": "chatcmpl-stand-in",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(said)}\n\n".encode()


async def _stream(text: str, calls: list[dict[str, Any]], model: str) -> AsyncIterator[bytes]:
    yield _chunk(model, {"role": "assistant", "content": text or None})
    if calls:
        yield _chunk(model, {"tool_calls": [{"index": n, **call} for n, call in enumerate(calls)]})
    yield _chunk(model, {}, "tool_calls" if calls else "stop")
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    last = {"id": "chatcmpl-stand-in", "object": "chat.completion.chunk", "choices": [], "usage": usage}
    yield f"data: {json.dumps(last)}\n\n".encode()
    yield b"data: [DONE]\n\n"


def build(command: str, requests_file: Path) -> Starlette:
    async def completions(request: Request) -> Response:
        body = await request.json()
        with requests_file.open("a") as log:
            log.write(json.dumps(body) + "\n")
        text, calls = reply(body, command)
        model = str(body.get("model", "gpt-stand-in"))
        if body.get("stream"):
            return StreamingResponse(_stream(text, calls, model), media_type="text/event-stream")
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = calls
        return JSONResponse(
            {
                "id": "chatcmpl-stand-in",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "gpt-stand-in", "object": "model", "owned_by": "test"}]})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/chat/completions", completions, methods=["POST"]),
            Route("/v1/models", models),
        ]
    )


if __name__ == "__main__":
    port, command, requests_file = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    uvicorn.run(build(command, requests_file), host="127.0.0.1", port=port, log_level="warning")
