"""Who acts and from where (core.acting): the trace id a request carries, and the log lines it makes."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings

from core import acting


def test_a_valid_traceparent_gives_its_trace_id_and_anything_else_the_requests_own() -> None:
    given = acting.origin_of("10.0.0.1", "curl/8", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    assert given.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    for bad in (
        "",
        "garbage",
        "00-" + "0" * 32 + "-00f067aa0ba902b7-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f0-01",
    ):
        own = acting.origin_of("10.0.0.1", "", bad)
        assert own.trace_id == own.request_id, bad
        assert len(own.request_id) == 32


def test_a_line_logged_while_serving_a_request_names_its_trace() -> None:
    configured: dict[str, Any] = settings.LOGGING
    formatter = logging.Formatter(configured["formatters"]["plain"]["format"])
    record = logging.LogRecord("questions", logging.INFO, __file__, 1, "answered", None, None)
    trace_filter = acting.TraceIdFilter()
    trace_filter.filter(record)
    assert formatter.format(record).endswith("INFO questions: answered"), "outside a request: as before"
    token = acting.origin_now.set(acting.origin_of("", "", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
    try:
        trace_filter.filter(record)
    finally:
        acting.origin_now.reset(token)
    assert formatter.format(record).endswith("questions [trace 4bf92f3577b34da6a3ce929d0e0e4736]: answered")
