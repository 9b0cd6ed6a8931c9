"""Reading requests and writing JSON responses in the site's plain ASGI endpoints (/mcp, /hooks/claude)."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import Receive, Scope, Send


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body; None when it is over `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return ""


async def send_json(send: Send, status: int, payload: Any, *, allow: bytes | None = None) -> None:
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if allow is not None:
        headers.append((b"allow", allow))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
