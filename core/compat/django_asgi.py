"""Django's ASGIHandler, its request served on the event loop without a thread of the request's own.

ASGIHandler.handle starts a thread per request to run `request_started`/`request_finished`
(which close that thread's connections) and a task watching for a disconnect. For a view that
does all its database work on the shared database thread (core.asgi_handler), those were most
of the request's time; this is handle() without them, from the steps Django's handler is made of.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.urls import set_script_prefix


async def handle_on_the_loop(handler: ASGIHandler, scope: dict[str, Any], receive: Any, send: Any) -> None:
    try:
        body_file = await handler.read_body(receive)
    except RequestAborted:  # the client went away before its body was in
        return
    try:
        set_script_prefix(get_script_prefix(scope))
        request, error_response = handler.create_request(scope, body_file)
        response = error_response if request is None else await handler.run_get_response(request)
        assert response is not None
        await handler.send_response(response, send)
    finally:
        body_file.close()
    # Not response.close(): it sends request_finished, whose receivers (closing this thread's
    # connections: it has none) are what this path does without. A JSON response holds nothing to close.
