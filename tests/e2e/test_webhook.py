"""HOOKBRIDGE_WEBHOOK_URL: a Slack-style post for every new question, never delaying the tool call."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx2
import pytest

from testing.fakes import serve
from testing.live import LiveServer


class Receiver:
    """A local HTTP receiver; with hang=True it takes requests and never answers."""

    def __init__(self, hang: bool) -> None:
        self.received: list[dict[str, Any]] = []
        self.signed: list[tuple[dict[str, str], bytes]] = []  # each post's headers (lower-cased) and raw body
        self.release = threading.Event()
        self.hang = hang
        self.returned: list[bool] = []  # one per post the receiver answered
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.signed.append(({k.lower(): v for k, v in self.headers.items()}, body))
                receiver.received.append(json.loads(body))
                if hang:
                    receiver.release.wait(120)
                self.send_response(200)
                receiver.returned.append(True)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = serve(Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()


SECRET = "a-shared-secret-for-the-receiver"


@pytest.fixture(params=[False, True], ids=["answering receiver", "hanging receiver"])
def hooked(request: pytest.FixtureRequest) -> Iterator[tuple[LiveServer, Receiver]]:
    receiver = Receiver(hang=request.param)
    env = {"HOOKBRIDGE_WEBHOOK_URL": receiver.url, "HOOKBRIDGE_MAX_HOLD": "60", "HOOKBRIDGE_WEBHOOK_SECRET": SECRET}
    server = LiveServer(env_overrides=env)
    server.setup()
    yield server, receiver
    server.close()
    receiver.close()


async def test_a_new_question_is_posted_without_delaying_the_call(hooked: tuple[LiveServer, Receiver]) -> None:
    server, receiver = hooked
    text = "Post me to the team channel?"
    async with server.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        question = await server.wait_for_question(text)
        await server.answer_via_api(question["id"], "posted")
        result = await asyncio.wait_for(call, 60)
    assert result.structured_content == {"answer": "posted"}
    if receiver.hang:  # answered while the receiver still held the post: the call never waited for it
        assert receiver.returned == [], "the call waited for the webhook's receiver"
    deadline = time.monotonic() + 30
    while not receiver.received and time.monotonic() < deadline:  # noqa: ASYNC110 - filled by another thread
        await asyncio.sleep(0.05)
    (posted,) = receiver.received
    assert posted["text"].startswith("*agent-a* asks: Post me to the team channel?")
    assert posted["dashboardUrl"].endswith(f"/questions/{question['id']}/")
    assert "/q/" in posted["link"]
    assert f"Answer it here: {posted['link']}" in posted["text"], "the signed link, answerable on a phone"
    # This server's test process sets no HOOKBRIDGE_PUBLIC_URL: the link's path, on the address it took.
    async with httpx2.AsyncClient(timeout=60) as anyone:
        opened = await anyone.get(server.url + "/q/" + posted["link"].split("/q/", 1)[1])
    assert opened.status_code == 410, "its question was answered: the link says so, with no form"
    assert "no longer waits" in opened.text

    # The receiver can tell the post is this server's: the README's check, as a receiver would write it.
    ((headers, body),) = receiver.signed
    timestamp = headers["x-hookbridge-timestamp"]
    expected = hmac.new(SECRET.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["x-hookbridge-signature"], f"sha256={expected}")
    assert abs(time.time() - int(timestamp)) < 60
