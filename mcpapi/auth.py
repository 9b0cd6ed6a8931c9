"""Bearer-token authentication for the JSON API (the /mcp mount uses the SDK's own layer)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse

from mcpapi.models import AgentToken


class TokenRequest(HttpRequest):
    agent_token: AgentToken


def bearer_token(request: HttpRequest) -> str:
    header = request.headers.get("Authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return ""


def token_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        token = AgentToken.authenticate(bearer_token(request))
        if token is None:
            response = JsonResponse(
                {"error": "A valid 'Authorization: Bearer <token>' header is required."}, status=401
            )
            response["WWW-Authenticate"] = 'Bearer realm="hookbridge"'
            return response
        request.agent_token = token  # type: ignore[attr-defined]
        return view(request, *args, **kwargs)

    return wrapper
