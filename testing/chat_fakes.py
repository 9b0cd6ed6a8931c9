"""Fakes of Telegram's Bot API and Discord's REST API, started by the tests, and their presses as the platforms send
them: a Telegram update with the webhook's secret, a Discord interaction signed with an Ed25519 key of the test's.

Each records every call as the server made it and answers as its platform does (Telegram's `{"ok": true,
"result": …}` and its errors; Discord's message objects, a repeated nonce answered with the message already made).
`delay` holds each answer back after the call is recorded, as a post that is made even if its caller dies.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from testing.fakes import serve

TELEGRAM_SECRET = "e2e-telegram-webhook-secret"
TELEGRAM_TOKEN = "123456:e2e-telegram-token"


def _reply(handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
    raw = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


class _Fake:
    """What every fake here shares: its server, and waiting for the calls the server under test makes."""

    _server: ThreadingHTTPServer | None

    def calls_of(self, method: str) -> list[dict[str, Any]]:
        raise NotImplementedError

    def wait_for(self, method: str, count: int = 1, timeout: float = 30) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.calls_of(method)) >= count:
                return self.calls_of(method)
            time.sleep(0.02)
        raise AssertionError(f"{method} was called {len(self.calls_of(method))} times, not {count}")

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()


@dataclass
class FakeTelegram(_Fake):
    token: str = TELEGRAM_TOKEN
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    messages: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)  # (chat, message_id) -> message
    errors: dict[str, tuple[int, str]] = field(default_factory=dict)  # method -> (status, description)
    queued: list[dict[str, Any]] = field(default_factory=list)  # what getUpdates gives
    delay: float = 0.0
    url: str = ""
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next_id: int = 100

    def calls_of(self, method: str) -> list[dict[str, Any]]:
        return [arguments for name, arguments in self.calls if name == method]

    def answer(self, method: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.calls.append((method, arguments))
            if method in self.errors:
                status, description = self.errors[method]
                return status, {"ok": False, "error_code": status, "description": description}
            if method == "sendMessage":
                self._next_id += 1
                chat = str(arguments.get("chat_id"))
                chat_id: int | str = int(chat) if chat.lstrip("-").isdigit() else chat
                message = {"message_id": self._next_id, "chat": {"id": chat_id}, "text": arguments.get("text"),
                           "reply_markup": arguments.get("reply_markup")}  # fmt: skip
                self.messages[(chat, self._next_id)] = message
                return 200, {"ok": True, "result": message}
            if method == "editMessageText":
                key = (str(arguments.get("chat_id")), int(arguments.get("message_id") or 0))
                if key not in self.messages:
                    return 400, {
                        "ok": False,
                        "error_code": 400,
                        "description": "Bad Request: message to edit not found",
                    }
                message = self.messages[key]
                if (message["text"], message["reply_markup"]) == (arguments.get("text"), arguments.get("reply_markup")):
                    return 400, {"ok": False, "error_code": 400, "description": "Bad Request: message is not modified"}
                message.update(text=arguments.get("text"), reply_markup=arguments.get("reply_markup"))
                return 200, {"ok": True, "result": message}
            if method == "getUpdates":
                offset = int(arguments.get("offset") or 0)
                return 200, {"ok": True, "result": [u for u in self.queued if u["update_id"] >= offset]}
            return 200, {"ok": True, "result": True}

    def start(self) -> FakeTelegram:
        fake = self
        path = re.compile(r"^/bot(?P<token>[^/]+)/(?P<method>\w+)$")

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                found = path.match(self.path)
                if found is None or found["token"] != fake.token:
                    _reply(self, 401, {"ok": False, "error_code": 401, "description": "Unauthorized"})
                    return
                status, body = fake.answer(found["method"], json.loads(raw or b"{}"))
                if found["method"] != "getUpdates":
                    time.sleep(fake.delay)
                _reply(self, status, body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = serve(Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self

    def sent(self) -> list[dict[str, Any]]:
        """The messages posted, in order, as they stand now."""
        return [self.messages[key] for key in sorted(self.messages, key=lambda key: key[1])]

    def callback(self, message: dict[str, Any], label: str, user_id: int, username: str) -> dict[str, Any]:
        """The update Telegram sends when `user_id` presses the button `label` of `message`."""
        buttons = [button for row in message["reply_markup"]["inline_keyboard"] for button in row]
        data = next(button["callback_data"] for button in buttons if button["text"] == label)
        self._next_id += 1
        return {
            "update_id": self._next_id,
            "callback_query": {
                "id": f"cq{self._next_id}", "from": {"id": user_id, "is_bot": False, "username": username,
                                                    "first_name": username.title()},
                "message": {"message_id": message["message_id"], "chat": message["chat"]},
                "chat_instance": "1", "data": data,
            },
        }  # fmt: skip


@contextmanager
def fake_telegram() -> Iterator[FakeTelegram]:
    fake = FakeTelegram().start()
    try:
        yield fake
    finally:
        fake.stop()


def telegram_env(fake: FakeTelegram, chat: str = "-1001234", steps: str = "telegram@0s") -> dict[str, str]:
    return {
        "HOOKBRIDGE_TELEGRAM_BOT_TOKEN": fake.token, "HOOKBRIDGE_TELEGRAM_CHAT_ID": chat,
        "HOOKBRIDGE_TELEGRAM_API_URL": fake.url, "HOOKBRIDGE_TELEGRAM_WEBHOOK_SECRET": TELEGRAM_SECRET,
        "HOOKBRIDGE_NOTIFY": steps,
    }  # fmt: skip


async def telegram_post(url: str, update: dict[str, Any], secret: str | None = TELEGRAM_SECRET) -> Any:
    """Post an update to the server at `url` as Telegram does (with the secret, unless None)."""
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["X-Telegram-Bot-Api-Secret-Token"] = secret
    async with httpx2.AsyncClient() as http:
        return await http.post(f"{url}/integrations/telegram/webhook", content=json.dumps(update), headers=headers)


@dataclass
class FakeDiscord(_Fake):
    token: str = "e2e-discord-bot-token"
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # method, path, body
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> message
    errors: dict[str, tuple[int, str]] = field(default_factory=dict)  # "POST"/"PATCH" -> (status, message)
    delay: float = 0.0
    in_flight: int = 0  # calls recorded whose answer has not gone back yet
    key: Ed25519PrivateKey = field(default_factory=Ed25519PrivateKey.generate)
    url: str = ""
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next_id: int = 1_100_000_000_000_000_000
    _nonces: dict[str, str] = field(default_factory=dict)

    @property
    def public_key(self) -> str:
        return self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()

    def calls_of(self, method: str) -> list[dict[str, Any]]:
        return [body for name, _, body in self.calls if name == method]

    def answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        with self._lock:
            self.calls.append((method, path, body))
            if method in self.errors:
                status, said = self.errors[method]
                return status, {"message": said, "code": 0}
            posting = re.fullmatch(r"/channels/(\d+)/messages", path)
            if method == "POST" and posting:
                nonce = str(body.get("nonce", ""))
                if body.get("enforce_nonce") and nonce in self._nonces:
                    return 200, self.messages[self._nonces[nonce]]  # as Discord: the message made already
                self._next_id += 1
                made_id = str(self._next_id)
                made = {"id": made_id, "channel_id": posting[1], "content": body.get("content"),
                        "components": body.get("components"), "nonce": nonce}  # fmt: skip
                self.messages[made_id] = made
                if nonce:
                    self._nonces[nonce] = made_id
                return 200, made
            editing = re.fullmatch(r"/channels/(\d+)/messages/(\d+)", path)
            if method == "PATCH" and editing:
                found = self.messages.get(editing[2])
                if found is None or found["channel_id"] != editing[1]:
                    return 404, {"message": "Unknown Message", "code": 10008}
                found.update(content=body.get("content"), components=body.get("components"))
                return 200, found
            return 404, {"message": "404: Not Found", "code": 0}

    def start(self) -> FakeDiscord:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self, method: str) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Authorization") != f"Bot {fake.token}":
                    _reply(self, 401, {"message": "401: Unauthorized", "code": 0})
                    return
                with fake._lock:
                    fake.in_flight += 1
                try:
                    status, body = fake.answer(method, self.path.removeprefix("/api/v10"), json.loads(raw or b"{}"))
                    time.sleep(fake.delay)
                finally:
                    with fake._lock:
                        fake.in_flight -= 1
                _reply(self, status, body)

            def do_POST(self) -> None:
                self._any("POST")

            def do_PATCH(self) -> None:
                self._any("PATCH")

            def log_message(self, *args: Any) -> None:
                pass

        self._server = serve(Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/api/v10"
        return self

    def signed(self, body: bytes, at: int | None = None) -> dict[str, str]:
        """The headers Discord sends with an interaction: its timestamp, and the signature of that and the body."""
        timestamp = str(int(time.time()) if at is None else at)
        signature = self.key.sign(timestamp.encode() + body).hex()
        return {"Content-Type": "application/json", "X-Signature-Ed25519": signature,
                "X-Signature-Timestamp": timestamp}  # fmt: skip

    def sent(self) -> list[dict[str, Any]]:
        return list(self.messages.values())

    def press(self, message: dict[str, Any], label: str, user_id: str, name: str) -> dict[str, Any]:
        """The interaction Discord sends when `user_id` presses the button `label` of `message` in a server."""
        buttons = [button for row in message["components"] for button in row["components"]]
        custom_id = next(button["custom_id"] for button in buttons if button.get("label") == label)
        return {
            "id": "1", "application_id": "2", "type": 3, "token": "interaction-token", "version": 1,
            "channel_id": message["channel_id"], "guild_id": "3",
            "member": {"user": {"id": user_id, "username": name, "global_name": name.title()}},
            "message": {"id": message["id"], "channel_id": message["channel_id"]},
            "data": {"custom_id": custom_id, "component_type": 2},
        }  # fmt: skip


@contextmanager
def fake_discord() -> Iterator[FakeDiscord]:
    fake = FakeDiscord().start()
    try:
        yield fake
    finally:
        fake.stop()


def discord_env(fake: FakeDiscord, channel: str = "987654321", steps: str = "discord@0s") -> dict[str, str]:
    return {
        "HOOKBRIDGE_DISCORD_BOT_TOKEN": fake.token, "HOOKBRIDGE_DISCORD_PUBLIC_KEY": fake.public_key,
        "HOOKBRIDGE_DISCORD_CHANNEL_ID": channel, "HOOKBRIDGE_DISCORD_API_URL": fake.url, "HOOKBRIDGE_NOTIFY": steps,
    }  # fmt: skip


async def discord_post(url: str, fake: FakeDiscord, interaction: dict[str, Any] | bytes, **sign: Any) -> Any:
    """Post an interaction to the server at `url` as Discord does, signed with the fake's key."""
    body = interaction if isinstance(interaction, bytes) else json.dumps(interaction).encode()
    async with httpx2.AsyncClient() as http:
        return await http.post(
            f"{url}/integrations/discord/interactions", content=body, headers=fake.signed(body, **sign)
        )


@dataclass
class FakeBotFramework(_Fake):
    """Microsoft's side of a Teams bot in one server: the sign-in that gives the bot its token (and checks its id
    and password), the Bot Framework's OpenID metadata and signing keys (a key of the test's own), and the Bot
    Connector service the cards are posted to and put back in. `bearer()` makes the token the Bot Framework
    sends with each activity; `invoke()` the activity of a card's button pressed."""

    app_id: str = "00000000-e2e0-4000-8000-0000000000a1"
    password: str = "e2e-teams-app-password"
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # method, path, body
    activities: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> the activity as it stands
    token_requests: list[dict[str, str]] = field(default_factory=list)
    key: Any = None
    url: str = ""
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next_id: int = 0

    ISSUER = "https://api.botframework.com"
    ACCESS_TOKEN = "e2e-bot-connector-token"

    @property
    def service_url(self) -> str:
        return f"{self.url}/connector/"

    def calls_of(self, method: str) -> list[dict[str, Any]]:
        return [body for name, _, body in self.calls if name == method]

    def answer(self, method: str, path: str, headers: Any, raw: bytes) -> tuple[int, Any]:
        with self._lock:
            if path == "/openid":
                return 200, {"issuer": self.ISSUER, "jwks_uri": f"{self.url}/keys",
                             "id_token_signing_alg_values_supported": ["RS256"]}  # fmt: skip
            if path == "/keys":
                public = self.key.as_dict(private=False)
                return 200, {"keys": [{**public, "use": "sig", "endorsements": ["msteams"]}]}
            if re.fullmatch(r"/[^/]+/oauth2/v2\.0/token", path) and method == "POST":
                form = {k: v[0] for k, v in urllib.parse.parse_qs(raw.decode()).items()}
                self.token_requests.append(form)
                if (form.get("client_id"), form.get("client_secret")) != (self.app_id, self.password):
                    return 401, {"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret"}
                return 200, {"token_type": "Bearer", "expires_in": 3599, "access_token": self.ACCESS_TOKEN}
            if headers.get("Authorization") != f"Bearer {self.ACCESS_TOKEN}":
                return 401, {"error": {"code": "Unauthorized", "message": "Authorization has been denied"}}
            body = json.loads(raw or b"{}")
            self.calls.append((method, path, body))
            posting = re.fullmatch(r"/connector/v3/conversations/([^/]+)/activities", path)
            if method == "POST" and posting:
                self._next_id += 1
                made = {"id": f"1:{self._next_id}", "conversation": urllib.parse.unquote(posting[1]), **body}
                self.activities[made["id"]] = made
                return 201, {"id": made["id"]}
            putting = re.fullmatch(r"/connector/v3/conversations/([^/]+)/activities/([^/]+)", path)
            if method == "PUT" and putting and urllib.parse.unquote(putting[2]) in self.activities:
                self.activities[urllib.parse.unquote(putting[2])].update(body)
                return 200, {"id": urllib.parse.unquote(putting[2])}
            if method == "POST" and putting:
                return 201, {"id": "reply"}
            return 404, {"error": {"code": "NotFound", "message": "Not found"}}

    def start(self) -> FakeBotFramework:
        from joserfc.jwk import RSAKey

        self.key = RSAKey.generate_key(2048, parameters={"kid": "e2e-key", "alg": "RS256"})
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self, method: str) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, body = fake.answer(method, self.path, self.headers, raw)
                _reply(self, status, body)

            def do_GET(self) -> None:
                self._any("GET")

            def do_POST(self) -> None:
                self._any("POST")

            def do_PUT(self) -> None:
                self._any("PUT")

            def log_message(self, *args: Any) -> None:
                pass

        self._server = serve(Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self

    def bearer(self, *, audience: str = "", issuer: str = "", expires_in: int = 3600, key: Any = None,
               service_url: str = "") -> str:  # fmt: skip
        """The token the Bot Framework sends with an activity (signed by the fake's key unless `key` is given)."""
        from joserfc import jwt

        now = int(time.time())
        claims = {"iss": issuer or self.ISSUER, "aud": audience or self.app_id, "iat": now - 5, "nbf": now - 5,
                  "exp": now + expires_in, "serviceurl": service_url or self.service_url}  # fmt: skip
        signer = key or self.key
        return "Bearer " + jwt.encode({"alg": "RS256", "kid": signer.kid or "e2e-key"}, claims, signer)

    def sent(self) -> list[dict[str, Any]]:
        return list(self.activities.values())

    def invoke(self, activity: dict[str, Any], title: str, aad_id: str, name: str) -> dict[str, Any]:
        """What Teams sends when `aad_id` presses the card button `title` of `activity`."""
        card = activity["attachments"][0]["content"]
        action = next(a for a in card["actions"] if a["title"] == title and a["type"] == "Action.Execute")
        return {
            "type": "invoke", "name": "adaptiveCard/action", "id": "f:1", "channelId": "msteams",
            "serviceUrl": self.service_url, "replyToId": activity["id"],
            "from": {"id": f"29:{aad_id}", "name": name, "aadObjectId": aad_id},
            "conversation": {"id": f"{activity['conversation']};messageid={activity['id']}",
                             "conversationType": "channel"},
            "recipient": {"id": f"28:{self.app_id}"},
            "value": {"action": {"type": "Action.Execute", "verb": action["verb"], "data": action["data"]}},
        }  # fmt: skip


@contextmanager
def fake_bot_framework() -> Iterator[FakeBotFramework]:
    fake = FakeBotFramework().start()
    try:
        yield fake
    finally:
        fake.stop()


def teams_env(
    fake: FakeBotFramework, conversation: str = "19:e2e@thread.tacv2", steps: str = "teams@0s"
) -> dict[str, str]:
    return {
        "HOOKBRIDGE_TEAMS_APP_ID": fake.app_id, "HOOKBRIDGE_TEAMS_APP_PASSWORD": fake.password,
        "HOOKBRIDGE_TEAMS_TENANT_ID": "e2e-tenant", "HOOKBRIDGE_TEAMS_SERVICE_URL": fake.service_url,
        "HOOKBRIDGE_TEAMS_CONVERSATION_ID": conversation, "HOOKBRIDGE_TEAMS_LOGIN_URL": fake.url,
        "HOOKBRIDGE_TEAMS_OPENID_METADATA_URL": f"{fake.url}/openid", "HOOKBRIDGE_NOTIFY": steps,
    }  # fmt: skip


async def teams_post(url: str, activity: dict[str, Any], authorization: str | None) -> Any:
    """Post an activity to the server at `url` as the Bot Framework does (with `authorization`, unless None)."""
    headers = {"Content-Type": "application/json"} | ({"Authorization": authorization} if authorization else {})
    async with httpx2.AsyncClient() as http:
        return await http.post(f"{url}/integrations/teams/messages", content=json.dumps(activity), headers=headers)
