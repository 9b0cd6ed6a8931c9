"""A scripted stand-in for the Gemini API, so the real Gemini CLI runs offline in a test.

It answers `generateContent` and `streamGenerateContent` as the CLI reads them. The CLI's model router asks
first for a JSON verdict naming `complexity_score`: it gets a simple one. A request that offers the
`run_shell_command` tool and carries no function response yet gets one function call running COMMAND; once
the CLI sends the call's response back, the reply is plain text saying what the tool said (so a test reads
what the model was told: the output, or why the command was blocked). Every request body is appended to
REQUESTS_FILE as one JSON line. COMMAND "mcp:<tool>:<JSON arguments>" calls that (MCP) tool instead, once
the CLI offers it.

    python -m testing.gemini_stand_in PORT COMMAND REQUESTS_FILE
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

SHELL = "run_shell_command"


def _offers(body: dict[str, Any], name: str) -> bool:
    for tools in body.get("tools") or []:
        for declaration in tools.get("functionDeclarations") or []:
            if declaration.get("name") == name:
                return True
    return False


def _function_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            if "functionResponse" in part:
                found.append(part["functionResponse"])
    return found


def reply_parts(body: dict[str, Any], command: str) -> list[dict[str, Any]]:
    if "complexity_score" in json.dumps(body.get("generationConfig") or {}) + json.dumps(body.get("contents") or []):
        verdict = {"complexity_reasoning": "One command.", "complexity_score": 1}
        return [{"text": json.dumps(verdict)}]
    responses = _function_responses(body)
    if responses:
        said = json.dumps(responses[-1].get("response"), ensure_ascii=False)
        return [{"text": f"The tool said: {said}"}]
    if command.startswith("mcp:"):
        tool, _, arguments = command.removeprefix("mcp:").partition(":")
        if _offers(body, tool):
            return [{"functionCall": {"name": tool, "args": json.loads(arguments)}}]
    elif _offers(body, SHELL):
        return [{"functionCall": {"name": SHELL, "args": {"command": command, "description": "Run the command"}}}]
    return [{"text": "Scripted reply"}]


def _response(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-stand-in",
    }


async def _stream(parts: list[dict[str, Any]]) -> AsyncIterator[bytes]:
    yield f"data: {json.dumps(_response(parts))}\r\n\r\n".encode()


def build(command: str, requests_file: Path) -> Starlette:
    async def model(request: Request) -> Response:
        body = await request.json()
        with requests_file.open("a") as log:
            log.write(json.dumps(body) + "\n")
        parts = reply_parts(body, command)
        if request.path_params["call"].endswith(":streamGenerateContent"):
            return StreamingResponse(_stream(parts), media_type="text/event-stream")
        if request.path_params["call"].endswith(":countTokens"):
            return JSONResponse({"totalTokens": 10})
        return JSONResponse(_response(parts))

    async def anything(request: Request) -> Response:
        return JSONResponse({})

    return Starlette(
        routes=[
            Route("/{version}/models/{call}", model, methods=["POST"]),
            Route("/{path:path}", anything, methods=["GET", "POST"]),
        ]
    )


if __name__ == "__main__":
    port, command, requests_file = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    uvicorn.run(build(command, requests_file), host="127.0.0.1", port=port, log_level="warning")
