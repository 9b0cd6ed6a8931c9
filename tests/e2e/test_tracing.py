"""OpenTelemetry (issue 56, point 6): with OTEL_EXPORTER_OTLP_ENDPOINT set, a real daphne exports a span for each
request to an OTLP/HTTP collector the test starts, continuing the caller's traceparent, for /mcp as for the API;
and an audit entry made without a traceparent carries its span's trace id."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx2
import pytest

from testing.fakes import serve
from testing.live import LiveServer, sqlite_at

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE}-00f067aa0ba902b7-01"


class Collector:
    """An OTLP/HTTP collector: keeps the body (protobuf) of each POST to /v1/traces."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path == "/v1/traces":
                    collector.bodies.append(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = serve(Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    async def holding(self, trace_id: str, timeout: float = 20) -> bytes:
        wanted, deadline = bytes.fromhex(trace_id), time.monotonic() + timeout
        while time.monotonic() < deadline:
            for body in self.bodies:
                if wanted in body:
                    return body
            await asyncio.sleep(0.1)
        raise AssertionError(f"no span of trace {trace_id} reached the collector ({len(self.bodies)} posts)")


@pytest.fixture(scope="module")
def traced() -> Iterator[tuple[LiveServer, Collector]]:
    collector = Collector()
    server = LiveServer(env_overrides={"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url, "OTEL_BSP_SCHEDULE_DELAY": "100"})
    server.setup()
    try:
        yield server, collector
    finally:
        server.close()
        collector.server.shutdown()


async def test_a_request_with_a_traceparent_is_exported_as_a_span_of_that_trace(
    traced: tuple[LiveServer, Collector],
) -> None:
    server, collector = traced
    async with httpx2.AsyncClient(timeout=60) as http:
        listed = await http.get(
            f"{server.url}/api/questions", headers={**server.auth("answer-bot"), "traceparent": PARENT}
        )
    assert listed.status_code == 200
    body = await collector.holding(TRACE)
    assert b"/api/questions" in body, "the span names the route it served"
    assert b"hookbridge" in body, "under the service's name"


async def test_an_answer_with_no_traceparent_carries_its_spans_trace_id_in_the_audit_record(
    traced: tuple[LiveServer, Collector],
) -> None:
    server, collector = traced
    text = "Traced: ship it?"
    async with server.mcp() as client:
        asked = asyncio.ensure_future(client.call_tool("ask_question", {"question": text}))
        question = await server.wait_for_question(text)
        answered = await server.answer_via_api(question["id"], "yes")
        assert answered.status_code == 200
        await asked
    with sqlite_at(server.tmp / "db.sqlite3") as db:
        row = db.execute(
            "SELECT trace_id, request_id FROM audit_entry WHERE action = 'question.answered' AND target_id = ?",
            (question["id"],),
        ).fetchone()
    assert row is not None
    trace_id, request_id = row
    assert trace_id != request_id, "the span's trace id, not the request's own"
    body = await collector.holding(trace_id)
    assert b"/api/mcp-answer" in body
    await collector.holding(trace_id)  # and /mcp's own requests are traced: one was served above
    assert any(b"/mcp" in b for b in collector.bodies)
