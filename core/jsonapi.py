"""The JSON API's error shape, the same from every endpoint: {"error": "<field>: <problem>", "field": "<field>"};
and reading a client's JSON so that no body can crash the server (too large, too deep, NaN)."""

from __future__ import annotations

import json
import math
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, JsonResponse

# Deeper than any message of ours needs (a tool call's arguments sit 3 levels down); Python's
# own parser gives up near 1000 with a RecursionError, and code walking a value recurses too.
MAX_DEPTH = 64


class BadJSON(ValueError):
    """The body is not JSON we take; the message says why, for the client."""


def json_error(message: str, *, status: int = 400, field: str | None = None, **extra: Any) -> JsonResponse:
    """An error a program can act on: the message names the field at fault, which is also given on its own."""
    body: dict[str, Any] = {"error": f"{field}: {message}" if field else message}
    if field:
        body["field"] = field
    body.update(extra)
    return JsonResponse(body, status=status)


def _refuse_constant(name: str) -> Any:
    raise BadJSON(f"{name} is not a JSON number; send a finite number or null")


def loads(body: bytes | str, *, constants: list[str] | None = None) -> Any:
    """Parse a client's JSON: BadJSON when it is invalid, holds NaN or Infinity, or nests deeper than MAX_DEPTH.

    With `constants`, NaN and ±Infinity are read as floats and noted there instead, for a caller
    with another error to report first.
    """

    def note_constant(name: str) -> float:
        assert constants is not None
        constants.append(name)
        return float(name)

    try:
        value = json.loads(body, parse_constant=_refuse_constant if constants is None else note_constant)
    except RecursionError:
        raise BadJSON(f"is nested too deeply: at most {MAX_DEPTH} levels of arrays and objects") from None
    except BadJSON:
        raise
    except ValueError as exc:
        raise BadJSON(f"is not valid JSON ({exc})") from None
    if too_deep(value):
        raise BadJSON(f"is nested too deeply: at most {MAX_DEPTH} levels of arrays and objects")
    return value


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest deeper than limit; without recursion, so any depth is safe to ask."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        nested: list[Any] = []
        for item in level:
            children = item.values() if isinstance(item, dict) else item
            nested.extend(child for child in children if isinstance(child, dict | list))
        level = nested
    return False


def unstorable(values: dict[str, Any], prefix: str = "", *, nul: bool = True) -> str | None:
    """The first value no database column can hold (a NUL character, half of a surrogate pair, NaN or
    ±Infinity), keys included, as "<field>: <problem>"; None when all is well. nul=False lets NUL by.

    Walked without recursion: over stdio nothing above the SDK bounds how deep a value nests.
    """
    stack: list[tuple[str | None, Any]] = [(None, values)]  # None: the top, where names take the prefix
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if problem := _bad_text(str(key), nul):
                    return f"{prefix}{key!r}: a key {problem}" if where is None else f"{where}: a key {problem}"
                stack.append((f"{prefix}{key}" if where is None else f"{where}.{key}", item))
        elif isinstance(value, list):
            stack.extend((f"{where}.{index}", item) for index, item in enumerate(value))
        elif isinstance(value, str) and (problem := _bad_text(value, nul)):
            return f"{where}: {problem}"
        elif isinstance(value, float) and not math.isfinite(value):
            written = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
            return f"{where}: {written} is not a JSON number; send a finite number or null"
    return None


def _bad_text(text: str, nul: bool = True) -> str | None:
    if nul and "\x00" in text:
        return "must not contain a NUL character (\\u0000)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "must not contain an unpaired surrogate (\\ud800-\\udfff); send valid Unicode text"
    return None


def object_body(
    request: HttpRequest, *, empty: str | None = None, limit: int | None = None, limit_named: str = ""
) -> dict[str, Any] | JsonResponse:
    """The request's JSON object, or the error response to send: 413 over the size limit, 400 otherwise.

    empty: what an empty body stands for (such as "{}"), or None when a body is required.
    limit: a route's own limit (an answer with images), past Django's DATA_UPLOAD_MAX_MEMORY_SIZE;
    limit_named: what the 413 says sets it. Unset: HOOKBRIDGE_MAX_BODY_BYTES.
    """
    declared = request.META.get("CONTENT_LENGTH") or "0"
    named = limit_named or "HOOKBRIDGE_MAX_BODY_BYTES"
    limit = limit or settings.HOOKBRIDGE_MAX_BODY_BYTES
    if declared.isdigit() and int(declared) > limit:
        return _too_large(limit, named)
    try:
        # Read from the stream, at most one byte past the limit: `request.body` would stop at Django's
        # own limit, which is the usual body's, not this route's.
        raw = request.read(limit + 1) if limit > settings.DATA_UPLOAD_MAX_MEMORY_SIZE else request.body
    except RequestDataTooBig:  # no Content-Length, or a false one: Django stops reading at its limit
        return _too_large(limit, named)
    if len(raw) > limit:
        return _too_large(limit, named)
    try:
        # NaN and ±Infinity are read, so that the error below can name the field holding one.
        payload = loads(raw or empty or "", constants=[])
    except BadJSON as exc:
        return json_error(str(exc), field="body")
    if not isinstance(payload, dict):
        return json_error("must be a JSON object", field="body")
    if problem := unstorable(payload):
        field, _, message = problem.partition(": ")
        return json_error(message, field=field)
    return payload


def _too_large(limit: int, named: str = "HOOKBRIDGE_MAX_BODY_BYTES") -> JsonResponse:
    return json_error(f"is larger than {limit} bytes ({named})", status=413, field="body")
