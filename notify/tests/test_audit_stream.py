"""The audit record streamed to a SIEM: every entry at least once, in order, signed; a refused post moves
nothing and is sent again."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from audit import chain
from core.acting import Actor
from notify import audit_stream
from notify.models import AuditStreamCursor
from notify.sending import Failed
from testing.fakes import serve

SECRET = "siem-shared-secret"


class Collector:
    """A SIEM's HTTP collector: records each post (headers and body); answers `status`."""

    def __init__(self) -> None:
        self.posts: list[tuple[dict[str, str], bytes]] = []
        self.status = 200
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                collector.posts.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(collector.status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = serve(Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/collect"

    def seqs(self) -> list[int]:
        return [entry["seq"] for _, body in self.posts for entry in json.loads(body)["entries"]]


@pytest.fixture
def collector(settings: Any) -> Iterator[Collector]:
    found = Collector()
    settings.HOOKBRIDGE_AUDIT_STREAM_URL = found.url
    settings.HOOKBRIDGE_AUDIT_STREAM_SECRET = SECRET
    yield found
    found.server.shutdown()


def record(count: int) -> None:
    for n in range(count):
        chain.record("rule.created", Actor("person", "ann"), details={"n": n})


def test_entries_are_posted_in_order_signed_and_each_once_while_the_collector_takes_them(
    db: None, collector: Collector
) -> None:
    record(3)
    assert audit_stream.send_due() == 3
    assert audit_stream.send_due() == 0, "nothing new: nothing posted"
    record(2)
    assert audit_stream.send_due() == 2
    assert collector.seqs() == [1, 2, 3, 4, 5]
    headers, body = collector.posts[0]
    signed = headers["x-hookbridge-timestamp"].encode() + b"." + body
    expected = hmac.new(SECRET.encode(), signed, hashlib.sha256).hexdigest()
    assert headers["x-hookbridge-signature"] == f"sha256={expected}"
    first = json.loads(body)["entries"][0]
    assert first["hash"] == chain.entry_hash(first), "each entry verifies on the receiver's side"


def test_a_refused_post_moves_nothing_and_the_batch_is_sent_again(db: None, collector: Collector) -> None:
    record(2)
    collector.status = 503
    with pytest.raises(Failed, match="HTTP 503"):
        audit_stream.send_due()
    cursor = AuditStreamCursor.objects.get()
    assert (cursor.sent_through, cursor.last_error) == (0, "the webhook answered HTTP 503")
    assert cursor.failing_since is not None
    collector.status = 200
    assert audit_stream.send_due() == 2
    assert collector.seqs() == [1, 2, 1, 2], "at least once: the receiver drops the repeat by seq"
    after = AuditStreamCursor.objects.get()
    assert after.sent_through == 2
    assert after.failing_since is None


def test_a_long_record_goes_out_in_batches(db: None, collector: Collector) -> None:
    record(audit_stream.BATCH + 5)
    assert audit_stream.send_due() == audit_stream.BATCH
    assert audit_stream.send_due() == 5
    assert collector.seqs() == list(range(1, audit_stream.BATCH + 6))
