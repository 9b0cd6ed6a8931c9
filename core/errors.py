"""The one error type for a request turned away before it changed anything.

Raised by the endpoints that answer outside Django's views (/mcp, /hooks/claude, Slack's actions) and by the
services they call (a hook run that may not start, a signed link that does not hold); each caller turns it
into its protocol's answer: an HTTP status with JSON or text, a tool error, a page.
"""

from __future__ import annotations

from typing import Any


class Refused(Exception):
    """What to say (naming the field at fault), the HTTP status, and what goes with it.

    `body`: the JSON to send when the endpoint's protocol fixes its shape (a JSON-RPC error object); else
    `{"error": message, "field": field}`. `headers`: sent with it (Retry-After, WWW-Authenticate, Allow).
    """

    def __init__(
        self,
        message: str,
        status: int = 400,
        *,
        field: str | None = None,
        body: dict[str, Any] | None = None,
        **headers: str,
    ) -> None:
        super().__init__(message)
        self.message, self.status, self.field, self.headers = message, status, field, headers
        self._body = body

    @property
    def body(self) -> dict[str, Any]:
        if self._body is not None:
            return self._body
        return {"error": self.message, **({"field": self.field} if self.field else {})}

    def header_bytes(self) -> dict[str, bytes]:
        """The headers as core.asgi_io.send_json takes them."""
        return {name: value.encode("latin-1", "replace") for name, value in self.headers.items()}
