"""A company's agent gets an MCP token from an ID-JAG, with no consent screen (issue 57, MCP's enterprise-managed
authorization): the Python SDK's own IdentityAssertionOAuthProvider against a real daphne, the company's provider
played by a signing issuer the test starts (oidc-provider mints no ID-JAGs). The token acts as the person the
assertion names; every assertion an attacker would try is refused by name and issues nothing."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from testing import idp
from testing.live import LiveServer

SECRET = "acme-agent-client-secret-0123456789"
SETUP = """
import json
from django.contrib.auth.models import User
from identity.models import Identity
from oauth2_provider.models import get_application_model
from projects.models import Project
olga = User.objects.create_user("olga@acme.example", email="olga@acme.example")
Project.default().set_member(olga, "answerer")
Identity.objects.create(user=olga, issuer="{issuer}", subject="acme|olga")
viewer = User.objects.create_user("vic@acme.example")
Project.default().set_member(viewer, "viewer")
Identity.objects.create(user=viewer, issuer="{issuer}", subject="acme|vic")
def client(name):
    app = get_application_model()(name=name, client_type="confidential", client_secret="{secret}",
                                  authorization_grant_type="client-credentials", redirect_uris="")
    app.save()
    return app.client_id
print(json.dumps({{"agent": client("Acme agent"), "other": client("Another agent")}}))
"""


class Storage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        pass


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[LiveServer, idp.SigningIssuer, dict[str, str]]]:
    issuer = idp.SigningIssuer()
    server = LiveServer(env_overrides={"HOOKBRIDGE_OIDC_ISSUER": issuer.issuer, "HOOKBRIDGE_OIDC_CLIENT_ID": "sign-in",
                                       "HOOKBRIDGE_ID_JAG": "1"})  # fmt: skip
    server.setup()
    try:
        said = server.manage("shell", "-v", "0", "-c", SETUP.format(issuer=issuer.issuer, secret=SECRET))
        yield server, issuer, json.loads(said.strip().splitlines()[-1])
    finally:
        server.close()
        issuer.close()


def our_issuer(server: LiveServer) -> str:
    return str(httpx2.get(f"{server.url}/.well-known/oauth-authorization-server").json()["issuer"])


def id_jag(issuer: idp.SigningIssuer, server: LiveServer, client_id: str, **changes: Any) -> str:
    now = int(time.time())
    claims = {"iss": issuer.issuer, "sub": "acme|olga", "aud": our_issuer(server), "resource": f"{server.url}/mcp",
              "client_id": client_id, "jti": uuid.uuid4().hex, "iat": now, "exp": now + 300,
              "email": "olga@acme.example", **changes}  # fmt: skip
    typ = str(claims.pop("typ", "oauth-id-jag+jwt"))
    return issuer.sign(claims, typ=typ)


def exchange(server: LiveServer, client_id: str, assertion: str, secret: str = SECRET) -> httpx2.Response:
    form = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion,
            "client_id": client_id, "client_secret": secret, "resource": f"{server.url}/mcp"}  # fmt: skip
    return httpx2.post(f"{server.url}/oauth/token/", data=form)


async def test_the_sdks_identity_assertion_client_calls_tools_as_the_person_with_no_consent_screen(
    world: tuple[LiveServer, idp.SigningIssuer, dict[str, str]],
) -> None:
    server, issuer, clients = world
    metadata = httpx2.get(f"{server.url}/.well-known/oauth-authorization-server").json()
    assert "urn:ietf:params:oauth:grant-type:jwt-bearer" in metadata["grant_types_supported"]
    asked: list[tuple[str, str]] = []

    async def fetch_id_jag(audience: str, resource: str) -> str:
        asked.append((audience, resource))
        return id_jag(issuer, server, clients["agent"], aud=audience, resource=resource)

    auth = IdentityAssertionOAuthProvider(
        server_url=f"{server.url}/mcp", storage=Storage(), client_id=clients["agent"], client_secret=SECRET,
        issuer=our_issuer(server), assertion_provider=fetch_id_jag,
    )  # fmt: skip
    text = "Asked by Acme's agent: ship the release?"
    http = httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=120))
    async with http, Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client:
        asked_call = asyncio.ensure_future(client.call_tool("ask_question", {"question": text}))
        question = await server.wait_for_question(text)
        assert (await server.answer_via_api(question["id"], "ship it")).status_code == 200
        result = await asked_call
    assert "ship it" in json.dumps(result.model_dump(mode="json"))
    assert asked == [(our_issuer(server), f"{server.url}/mcp")]
    owner = "from tokens.models import AgentToken; print(AgentToken.objects.get(oauth_client__name='Acme agent').user)"
    assert server.manage("shell", "-v", "0", "-c", owner).strip() == "olga@acme.example"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"typ": "JWT"}, "typ must be oauth-id-jag+jwt"),
        ({"aud": "https://another-server.example"}, "aud"),
        ({"resource": "https://another-server.example/mcp"}, "its resource must be"),
        ({"iss": "https://evil.example"}, "iss"),
        ({"sub": "acme|nobody"}, "sub: nobody here by that subject"),
        ({"sub": "acme|vic"}, "may not make agent tokens"),
        ({"exp": int(time.time()) - 600, "iat": int(time.time()) - 700}, "expired"),
        ({"exp": int(time.time()) + 86400}, "longer than ten minutes"),
    ],
)
def test_an_assertion_an_attacker_would_try_is_refused_by_name(
    world: tuple[LiveServer, idp.SigningIssuer, dict[str, str]], change: dict[str, Any], said: str
) -> None:
    server, issuer, clients = world
    response = exchange(server, clients["agent"], id_jag(issuer, server, clients["agent"], **change))
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_grant"
    assert said in response.json()["error_description"]


def test_a_spent_assertion_another_clients_or_another_keys_buys_nothing(
    world: tuple[LiveServer, idp.SigningIssuer, dict[str, str]],
) -> None:
    server, issuer, clients = world
    assertion = id_jag(issuer, server, clients["agent"])
    assert exchange(server, clients["agent"], assertion).status_code == 200
    again = exchange(server, clients["agent"], assertion)
    assert "used already" in again.json()["error_description"]
    stolen = exchange(server, clients["other"], id_jag(issuer, server, clients["agent"]))
    assert "issued to another client" in stolen.json()["error_description"]
    wrong_secret = exchange(server, clients["agent"], id_jag(issuer, server, clients["agent"]), secret="guess")
    assert wrong_secret.status_code == 401
    assert wrong_secret.json()["error"] == "invalid_client"
    now = int(time.time())
    forged = issuer.sign({"iss": issuer.issuer, "sub": "acme|olga", "aud": our_issuer(server),
                          "resource": f"{server.url}/mcp", "client_id": clients["agent"], "jti": "forged",
                          "iat": now, "exp": now + 60}, typ="oauth-id-jag+jwt", key=issuer.other)  # fmt: skip
    assert "not signed by" in exchange(server, clients["agent"], forged).json()["error_description"]
