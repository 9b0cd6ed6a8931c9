"""An OpenID provider for the tests, started by them: oidc-provider (npm) in tests/ts/idp.mjs, on a free port.

`make test` installs it (npm ci in tests/ts). People are `login -> claims` (email, name, groups...); the dev
interactions take any password. `clock_offset` moves the provider's clock (seconds), for the clock-skew test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from testing.live import LiveServer, free_port
from testing.ts_client import TS_DIR

CLIENT_ID = "hookbridge"
CLIENT_SECRET = "hookbridge-client-secret-for-the-tests"


def missing() -> str | None:
    """Why the provider cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (TS_DIR / "node_modules" / "oidc-provider").is_dir():
        return "oidc-provider is not installed (make test runs npm ci in tests/ts)"
    return None


@dataclass
class Provider:
    port: int
    process: subprocess.Popen[str]
    people: dict[str, dict[str, Any]] = field(default_factory=dict)
    log: Path | None = None

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def settings(self, **more: str) -> dict[str, str]:
        """The environment a Hook Bridge server signs in through this provider with."""
        return {
            "HOOKBRIDGE_OIDC_ISSUER": self.issuer,
            "HOOKBRIDGE_OIDC_CLIENT_ID": CLIENT_ID,
            "HOOKBRIDGE_OIDC_CLIENT_SECRET": CLIENT_SECRET,
            "HOOKBRIDGE_OIDC_NAME": "Acme",
            **more,
        }


@contextmanager
def provider(
    people: dict[str, dict[str, Any]], redirect_uris: list[str], *, clock_offset: int = 0, port: int = 0
) -> Iterator[Provider]:
    port = port or free_port()
    logout_uris = [uri.replace("/sso/callback", "/accounts/login/") for uri in redirect_uris]
    config = {
        "port": port,
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "redirect_uris": redirect_uris,
        "post_logout_redirect_uris": logout_uris,
        "people": people,
    }
    env = {**os.environ, "IDP_CONFIG": json.dumps(config), "IDP_CLOCK_OFFSET_SECONDS": str(clock_offset)}
    log = Path(tempfile.mkstemp(prefix="hookbridge-idp-", suffix=".log")[1])
    with log.open("w") as out:
        process = subprocess.Popen(
            ["node", "idp.mjs"], cwd=TS_DIR, env=env, stdout=out, stderr=subprocess.STDOUT, text=True
        )
    try:
        deadline = time.monotonic() + 60
        while "ready " not in log.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"oidc-provider did not start:\n{log.read_text()}")
            time.sleep(0.05)
        yield Provider(port, process, people, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.unlink(missing_ok=True)


def _form(html: str) -> tuple[str, dict[str, str]]:
    action = re.search(r'<form[^>]*action="([^"]+)"', html)
    assert action, f"no form on the provider's page:\n{html[:2000]}"
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html))
    return action.group(1).replace("&amp;", "&"), fields


def sign_in(http: httpx2.Client, server_url: str, login: str, *, start: str = "/sso/login") -> httpx2.Response:
    """What a person does in the browser, over HTTP: Hook Bridge's button, the provider's login and consent pages.
    Returns the last response Hook Bridge gave (its redirect to the dashboard, or its page)."""
    page = http.get(f"{server_url}{start}", follow_redirects=True)
    for _ in range(4):  # the provider's login page, then its consent page
        if not page.url.host or str(page.url).startswith(server_url):
            break
        action, fields = _form(page.text)
        if "login" in page.text and 'name="login"' in page.text:
            fields.update({"login": login, "password": "any password"})
        target = str(page.url.join(action))
        page = http.post(target, data=fields, follow_redirects=False)
        while page.is_redirect:
            location = str(page.url.join(page.headers["location"]))
            if location.startswith(server_url):
                return http.get(location, follow_redirects=False)
            page = http.get(location, follow_redirects=False)
    return page


@contextmanager
def hookbridge_with(
    people: dict[str, dict[str, Any]], *, clock_offset: int = 0, **env: str
) -> Iterator[tuple[LiveServer, Provider]]:
    """A provider and a Hook Bridge server registered with it (the callback on the server's own port), with a
    project `shop` for the groups to give roles in."""
    port = free_port()
    with provider(people, [f"http://127.0.0.1:{port}/sso/callback"], clock_offset=clock_offset) as idp:
        server = LiveServer(port=port, env_overrides=idp.settings(**env))
        server.setup()
        try:
            server.manage("project", "create", "shop")
            yield server, idp
        finally:
            server.close()


class SigningIssuer:
    """An OpenID issuer whose discovery, keys and token answers are the test's, on a free localhost port: for
    what oidc-provider never sends (a token for another audience, signed by another key...) and for ID-JAGs."""

    def __init__(self) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": "good"})
        self.other = RSAKey.generate_key(2048, parameters={"kid": "good"})  # same kid, not in the key set
        self.claims: dict[str, Any] = {}
        self.sign_with = self.key
        self.token_status = 200
        self.token_body: dict[str, Any] | None = None
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/.well-known/openid-configuration":
                    self._send(200, provider.discovery())
                elif self.path == "/jwks":
                    self._send(200, dict(KeySet([provider.key]).as_dict(private=False)))
                elif self.path == "/userinfo":
                    self._send(200, {"sub": provider.claims.get("sub", "")})
                else:
                    self._send(404, {})

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if provider.token_body is not None:
                    self._send(provider.token_status, provider.token_body)
                    return
                token = jwt.encode({"alg": "RS256", "kid": "good"}, provider.claims, provider.sign_with)
                self._send(200, {"access_token": "at", "token_type": "Bearer", "expires_in": 60, "id_token": token})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/auth",
            "token_endpoint": f"{self.issuer}/token",
            "jwks_uri": f"{self.issuer}/jwks",
            "userinfo_endpoint": f"{self.issuer}/userinfo",
            "id_token_signing_alg_values_supported": ["RS256"],
        }

    def sign(self, claims: dict[str, Any], typ: str = "JWT", key: RSAKey | None = None) -> str:
        return jwt.encode({"alg": "RS256", "kid": "good", "typ": typ}, claims, key or self.key)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
