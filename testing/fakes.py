"""Outside services the tests start themselves: a fake of Slack's Web API, a mail sink (aiosmtpd), and a Web
Push service that checks each push's VAPID signature and decrypts its payload.

The fake Slack records every call as the server made it (method and arguments) and answers as Slack does
(`{"ok": true, ...}`), or with the error a test sets for a method. The sink keeps every mail it is sent.
"""

from __future__ import annotations

import base64
import email
import email.policy
import hashlib
import hmac
import json
import os
import secrets
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
import httpx2
from aiosmtpd.controller import Controller
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """A fake's HTTP server on a free port of 127.0.0.1, answering on a thread of its own until shut down."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # shutdown() waits for the loop's next look at its flag: at the default half second, every test that
    # stopped a fake waited that long (45 of notify's tests, 0.5 s each, half the file's time).
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return server


@dataclass
class FakeSlack:
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    called_at: list[tuple[str, float]] = field(default_factory=list)  # each call's method and time.monotonic()
    posted: list[dict[str, Any]] = field(default_factory=list)  # what chat.postMessage answered: channel, ts
    errors: dict[str, str] = field(default_factory=dict)  # method -> Slack's error word
    emails: dict[str, str] = field(default_factory=dict)  # Slack user id -> e-mail (users.info)
    replies: dict[str, dict[str, Any]] = field(default_factory=dict)  # method -> the whole answer, as given
    # Seconds each answer takes to come back, after the call is recorded (a slow Slack; a post that is made
    # even if its caller dies before the answer arrives, as Slack's are). `slow`: only these methods (empty: all).
    delay: float = 0.0
    slow: tuple[str, ...] = ()
    # The workspace's channels the bot is in, by name (conversations.list); each one's ID is what a post to it says.
    channels: tuple[str, ...] = ("agents",)
    messages: list[dict[str, Any]] = field(default_factory=list)  # what was posted: channel, ts, metadata
    in_flight: int = 0  # calls recorded whose answer has not gone back yet
    _counting: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""
    _server: ThreadingHTTPServer | None = None
    _ts: float = 0.0

    def calls_of(self, method: str) -> list[dict[str, Any]]:
        return [arguments for name, arguments in self.calls if name == method]

    def times_of(self, method: str) -> list[float]:
        """When each call of `method` came (time.monotonic())."""
        return [at for name, at in self.called_at if name == method]

    def wait_for(self, method: str, count: int = 1, timeout: float = 30) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.calls_of(method)
            if len(found) >= count:
                return found
            time.sleep(0.02)
        raise AssertionError(f"{method} was called {len(self.calls_of(method))} times, not {count}: {self.calls}")

    def answer(self, method: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((method, arguments))
        self.called_at.append((method, time.monotonic()))
        if method in self.errors:
            return {"ok": False, "error": self.errors[method]}
        if method in self.replies:
            return self.replies[method]
        if method == "chat.postMessage":
            # Slack's ts is the message's Unix time, to the microsecond, unique in its channel.
            self._ts = max(time.time(), self._ts + 0.000001)
            channel = self.channel_id(str(arguments.get("channel", "")))
            self.posted.append({"channel": channel, "ts": f"{self._ts:.6f}"})
            metadata = arguments.get("metadata")
            metadata = json.loads(metadata) if isinstance(metadata, str) else metadata
            self.messages.append({**self.posted[-1], "metadata": metadata})
            return {"ok": True, **self.posted[-1]}
        if method == "chat.update":
            # Slack replaces a message's metadata when the update gives one.
            found = [
                m for m in self.messages if (m["channel"], m["ts"]) == (arguments.get("channel"), arguments.get("ts"))
            ]
            if not found:
                return {"ok": False, "error": "message_not_found"}
            metadata = arguments.get("metadata")
            if metadata:
                found[0]["metadata"] = json.loads(metadata) if isinstance(metadata, str) else metadata
            return {"ok": True, "channel": found[0]["channel"], "ts": found[0]["ts"]}
        if method == "conversations.history":
            # Newest first, as Slack lists them, between oldest and latest (each inclusive only when asked);
            # metadata only when asked for.
            oldest = float(arguments.get("oldest") or 0)
            latest = float(arguments.get("latest") or "inf")
            inclusive = str(arguments.get("inclusive", "")).lower() in ("1", "true")
            found = [
                {"ts": m["ts"], **({"metadata": m["metadata"]} if arguments.get("include_all_metadata") else {})}
                for m in reversed(self.messages)
                if m["channel"] == arguments.get("channel")
                and (oldest <= float(m["ts"]) <= latest if inclusive else oldest <= float(m["ts"]) < latest)
            ]
            return {"ok": True, "messages": found[: int(arguments.get("limit") or 100)]}
        if method == "conversations.list":
            listed = [{"id": self.channel_id(name), "name": name} for name in self.channels]
            return {"ok": True, "channels": listed, "response_metadata": {"next_cursor": ""}}
        if method == "users.info":
            user = str(arguments.get("user", ""))
            return {"ok": True, "user": {"id": user, "profile": {"email": self.emails.get(user, "")}}}
        return {"ok": True}

    @staticmethod
    def channel_id(named: str) -> str:
        """A channel named by its ID is that channel; a name has an ID of its own, as Slack answers."""
        return named if named[:1] == "C" and named.isupper() else "C0FAKE" + named.strip("#")[:4].upper()

    def start(self) -> FakeSlack:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                if "json" in (self.headers.get("Content-Type") or ""):
                    arguments = json.loads(raw or "{}")
                else:
                    arguments = {key: values[0] for key, values in urllib.parse.parse_qs(raw).items()}
                    for key in ("blocks", "attachments"):
                        if isinstance(arguments.get(key), str):
                            arguments[key] = json.loads(arguments[key])
                with fake._counting:
                    fake.in_flight += 1
                method = self.path.strip("/").split("/")[-1]
                try:
                    reply = json.dumps(fake.answer(method, arguments)).encode()
                    if not fake.slow or method in fake.slow:
                        time.sleep(fake.delay)
                finally:
                    with fake._counting:
                        fake.in_flight -= 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = serve(Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/api/"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()


@contextmanager
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    try:
        yield fake
    finally:
        fake.stop()


class _Sink:
    def __init__(self) -> None:
        self.mails: list[EmailMessage] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        self.mails.append(message)
        return "250 Message accepted for delivery"


@dataclass
class MailSink:
    port: int
    mails: list[EmailMessage]

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def wait_for(self, count: int = 1, timeout: float = 30) -> list[EmailMessage]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.mails) >= count:
                return self.mails
            time.sleep(0.02)
        raise AssertionError(f"{len(self.mails)} mails, not {count}")


@contextmanager
def mail_sink() -> Iterator[MailSink]:
    handler = _Sink()
    with socket.socket() as probe:  # aiosmtpd checks its port by connecting to it: it needs a real one
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield MailSink(port, handler.mails)
    finally:
        controller.stop()


def slack_signature(secret: str, body: bytes, timestamp: int) -> str:
    """What Slack puts in X-Slack-Signature: v0= and the HMAC-SHA256 of v0:<timestamp>:<body>."""
    return "v0=" + hmac.new(secret.encode(), f"v0:{timestamp}:".encode() + body, hashlib.sha256).hexdigest()


SLACK_SECRET = "e2e-slack-signing-secret"


def notify_env(slack: FakeSlack, mails: MailSink, steps: str, port: int | None = None) -> dict[str, str]:
    env = {
        "HOOKBRIDGE_SLACK_BOT_TOKEN": "xoxb-e2e", "HOOKBRIDGE_SLACK_SIGNING_SECRET": SLACK_SECRET,
        "HOOKBRIDGE_SLACK_CHANNEL": "#agents", "HOOKBRIDGE_SLACK_API_URL": slack.url, "EMAIL_URL": mails.url,
        "HOOKBRIDGE_EMAIL_TO": "lead@example.com", "HOOKBRIDGE_NOTIFY": steps, "HOOKBRIDGE_MAX_HOLD": "60",
        # Whoever is in the channel answers (the roles a press needs by default: notify/tests/test_notify.py).
        "HOOKBRIDGE_SLACK_CHANNEL_DECIDES": "1",
    }  # fmt: skip
    if port is not None:
        env["HOOKBRIDGE_PUBLIC_URL"] = f"http://127.0.0.1:{port}"
    return env


async def slack_press(url: str, slack: FakeSlack, index: int, choice_label: str, *, at: int | None = None) -> Any:
    """Press a button of the index-th message posted, as Slack sends it to the server at `url`: form-encoded, signed."""
    (_, posted), where = [c for c in slack.calls if c[0] == "chat.postMessage"][index], slack.posted[index]
    button = next(
        element for block in posted["blocks"] if block["type"] == "actions" for element in block["elements"]
        if element["text"]["text"] == choice_label
    )  # fmt: skip
    payload = {
        "type": "block_actions", "user": {"id": "U42", "name": "dana"},
        "container": {"channel_id": where["channel"], "message_ts": where["ts"]},
        "actions": [{"action_id": button["action_id"], "value": button["value"]}],
    }  # fmt: skip
    body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    timestamp = int(time.time()) if at is None else at
    headers = {
        "Content-Type": "application/x-www-form-urlencoded", "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": slack_signature(SLACK_SECRET, body, timestamp),
    }  # fmt: skip
    async with httpx2.AsyncClient() as http:
        return await http.post(f"{url}/integrations/slack/actions", content=body, headers=headers)


@dataclass
class Pushed:
    """One push as the fake push service took it: which subscription, its headers, and the payload decrypted."""

    subscription: str
    headers: dict[str, str]
    claims: dict[str, Any]
    payload: dict[str, Any]


@dataclass
class FakePushService:
    """A Web Push service (RFC 8030) as a browser's would be, for one test: it hands out subscriptions as a
    browser's PushSubscription gives them (its own P-256 key and auth secret each), and takes a push only when
    its VAPID token (RFC 8292) is signed by the key it names, for this service's origin, not expired; then it
    decrypts the payload with the subscription's private key (RFC 8291, aes128gcm), as the browser would.
    `status`: an answer to give a subscription's pushes instead (410: the browser unsubscribed)."""

    pushed: list[Pushed] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # why a push was turned away
    status: dict[str, int] = field(default_factory=dict)
    # Subscriptions whose pushes are answered 307 with this Location (a service that would bounce them elsewhere).
    redirect: dict[str, str] = field(default_factory=dict)
    _keys: dict[str, tuple[Any, bytes]] = field(default_factory=dict)
    url: str = ""
    _server: ThreadingHTTPServer | None = None

    def subscribe(self) -> dict[str, Any]:
        key, secret = ec.generate_private_key(ec.SECP256R1()), os.urandom(16)
        name = f"sub-{len(self._keys) + 1}-{secrets.token_hex(4)}"
        self._keys[name] = (key, secret)
        point = key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        return {
            "endpoint": f"{self.url}/push/{name}", "expirationTime": None,
            "keys": {"p256dh": _b64url(point), "auth": _b64url(secret)},
        }  # fmt: skip

    def take(self, path: str, headers: dict[str, str], body: bytes) -> int:
        name = path.rsplit("/", 1)[-1]
        if name not in self._keys:
            self.refused.append(f"no subscription {name}")
            return 404
        try:
            claims = verified_vapid(headers.get("authorization", ""), self.url)
        except ValueError as exc:
            self.refused.append(str(exc))
            return 403
        if name in self.status:
            return self.status[name]
        if headers.get("content-encoding") != "aes128gcm" or "ttl" not in headers:
            self.refused.append(f"headers: {headers}")
            return 400
        key, secret = self._keys[name]
        plain = http_ece.decrypt(body, private_key=key, auth_secret=secret, version="aes128gcm")
        self.pushed.append(Pushed(name, headers, claims, json.loads(plain)))
        return 201

    def wait_for(self, count: int = 1, timeout: float = 30) -> list[Pushed]:
        deadline = time.monotonic() + timeout
        while len(self.pushed) < count:
            assert time.monotonic() < deadline, f"{len(self.pushed)} pushes, not {count}; refused: {self.refused}"
            time.sleep(0.02)
        return self.pushed

    def start(self) -> FakePushService:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {name.lower(): value for name, value in self.headers.items()}
                name = self.path.rsplit("/", 1)[-1]
                if name in fake.redirect:
                    self.send_response(307)
                    self.send_header("Location", fake.redirect[name])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status = fake.take(self.path, headers, body)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = serve(Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()


@contextmanager
def fake_push_service() -> Iterator[FakePushService]:
    fake = FakePushService().start()
    try:
        yield fake
    finally:
        fake.stop()


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verified_vapid(authorization: str, audience: str) -> dict[str, Any]:
    """The claims of a `vapid t=<JWT>, k=<key>` header, once its ES256 signature holds for the key it names."""
    scheme, _, rest = authorization.partition(" ")
    parts = dict(part.strip().split("=", 1) for part in rest.split(",") if "=" in part)
    if scheme.lower() != "vapid" or "t" not in parts or "k" not in parts:
        raise ValueError(f"Authorization is not VAPID: {authorization!r}")
    header, claims, signature = parts["t"].split(".")
    if json.loads(_unb64url(header)) != {"typ": "JWT", "alg": "ES256"}:
        raise ValueError(f"the token's header: {_unb64url(header)!r}")
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), _unb64url(parts["k"]))
    raw = _unb64url(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        public.verify(der, f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise ValueError("the VAPID signature does not hold for its key") from None
    found: dict[str, Any] = json.loads(_unb64url(claims))
    if found.get("aud") != audience:
        raise ValueError(f"aud is {found.get('aud')!r}, not {audience!r}")
    if not time.time() < int(found.get("exp", 0)) <= time.time() + 24 * 3600:
        raise ValueError(f"exp {found.get('exp')} is not within the next 24 hours")
    if not str(found.get("sub", "")).startswith(("mailto:", "https://")):
        raise ValueError(f"sub {found.get('sub')!r} is neither mailto: nor https:")
    return found
