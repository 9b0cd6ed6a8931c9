"""Reading requests and writing JSON responses in the site's plain ASGI endpoints (/mcp, /hooks/claude)."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


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


async def send_json(
    send: Send,
    status: int,
    payload: Any,
    *,
    allow: bytes | None = None,
    www_authenticate: bytes | None = None,
    retry_after: bytes | None = None,
) -> None:
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if allow is not None:
        headers.append((b"allow", allow))
    if www_authenticate is not None:
        headers.append((b"www-authenticate", www_authenticate))
    if retry_after is not None:
        headers.append((b"retry-after", retry_after))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def headers_only_for_head(app: ASGIApp) -> ASGIApp:
    """Answer HEAD with the response's headers and no body, whatever its size.

    Daphne drops only a HEAD response's first body chunk (Twisted discards the first write, and
    daphne calls the class's write for the rest), and Django sends a page in 64 KiB chunks: the
    rest of a larger page went onto the connection, and the next response on a kept-alive
    connection (nginx keeps them to the workers) read as garbage.
    """

    async def app_without_body(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "HEAD":
            await app(scope, receive, send)
            return

        async def send_headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await app(scope, receive, send_headers_only)

    return app_without_body
