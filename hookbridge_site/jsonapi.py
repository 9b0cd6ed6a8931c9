"""The JSON API's error shape, the same from every endpoint: {"error": "<field>: <problem>", "field": "<field>"}."""

from __future__ import annotations

from typing import Any

from django.http import JsonResponse


def json_error(message: str, *, status: int = 400, field: str | None = None, **extra: Any) -> JsonResponse:
    """An error a program can act on: the message names the field at fault, which is also given on its own."""
    body: dict[str, Any] = {"error": f"{field}: {message}" if field else message}
    if field:
        body["field"] = field
    body.update(extra)
    return JsonResponse(body, status=status)
