"""An OAuth client's steps against the test client: register, authorize with PKCE, allow, exchange."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.test import Client

REDIRECT = "http://127.0.0.1:33418/callback"


RESOURCE = "http://testserver/mcp"


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def register(client: Client, name: str = "Claude Code") -> dict[str, Any]:
    body = {
        "client_name": name,
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    response = client.post("/oauth/register/", data=json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    registered: dict[str, Any] = response.json()
    return registered


def authorization(client_id: str, challenge: str, **changes: str) -> dict[str, str]:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "s-1",
        "scope": "mcp",
        "resource": RESOURCE,
    }
    params.update(changes)
    return {key: value for key, value in params.items() if value != ""}


def allow(client: Client, params: dict[str, str]) -> str:
    """The consent form sent with Allow: the code the client's redirect address receives."""
    response = client.post("/oauth/authorize/", data={**params, "allow": "Authorize"})
    assert response.status_code == 302, response.content[:300]
    query = parse_qs(urlsplit(response["Location"]).query)
    assert query["state"] == ["s-1"]
    assert query["iss"] == ["http://testserver"]  # RFC 9207: which server answered
    return query["code"][0]


def exchange(client: Client, client_id: str, code: str, verifier: str, redirect_uri: str = REDIRECT) -> Any:
    return client.post(
        "/oauth/token/",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": RESOURCE,
        },
    )
