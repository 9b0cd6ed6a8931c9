"""The authorization server (tokens.oauth, tokens.oauth_views): metadata, registration, consent, exchange, refusals."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client
from oauth2_provider.cimd import CIMDError
from oauth2_provider.models import get_access_token_model, get_application_model, get_grant_model

from testing.oauth import REDIRECT, RESOURCE, allow, authorization, exchange, pkce, register
from tokens import oauth
from tokens.client_documents import ReportingFetcher
from tokens.models import AgentToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(logged_in: Client) -> tuple[Client, str, str, str]:
    """A registered client and a code for it: (browser, client_id, code, verifier)."""
    client_id = register(logged_in)["client_id"]
    verifier, challenge = pkce()
    code = allow(logged_in, authorization(client_id, challenge))
    return logged_in, client_id, code, verifier


def test_the_authorization_server_metadata_lists_what_mcp_clients_need(client: Client) -> None:
    document = client.get("/.well-known/oauth-authorization-server").json()

    assert document["issuer"] == "http://testserver"
    assert document["authorization_endpoint"] == "http://testserver/oauth/authorize/"
    assert document["token_endpoint"] == "http://testserver/oauth/token/"
    assert document["registration_endpoint"] == "http://testserver/oauth/register/"
    assert document["revocation_endpoint"] == "http://testserver/oauth/revoke/"
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert "mcp" in document["scopes_supported"]
    assert "authorization_code" in document["grant_types_supported"]


@pytest.mark.parametrize("path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"])
def test_the_protected_resource_metadata_names_this_servers_mcp(client: Client, path: str) -> None:
    document = client.get(path).json()

    assert document["resource"] == RESOURCE
    assert document["authorization_servers"] == ["http://testserver"]
    assert document["scopes_supported"] == ["mcp"]


def test_a_tool_set_mount_is_its_own_resource_and_nothing_else_is_one(client: Client) -> None:
    mount = client.get("/.well-known/oauth-protected-resource/mcp/clifford").json()
    assert mount["resource"] == "http://testserver/mcp/clifford"

    assert client.get("/.well-known/oauth-protected-resource/admin").status_code == 404


def test_a_client_registers_itself_without_a_secret(client: Client) -> None:
    registered = register(client)

    assert registered["client_id"]
    assert not registered.get("client_secret")
    application = get_application_model().objects.get(client_id=registered["client_id"])
    assert application.client_type == "public"
    assert application.name == "Claude Code"


def test_the_consent_page_needs_a_login(client: Client) -> None:
    client_id = register(client)["client_id"]
    params = authorization(client_id, pkce()[1])

    response = client.get("/oauth/authorize/?" + urlencode(params))

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/oauth/authorize/")


def test_the_consent_page_says_who_asks_for_what_and_as_whom(logged_in: Client) -> None:
    client_id = register(logged_in)["client_id"]

    response = logged_in.get("/oauth/authorize/?" + urlencode(authorization(client_id, pkce()[1])))

    assert response.status_code == 200
    page = response.content.decode()
    assert 'Allow <span class="client-name">Claude Code</span>?' in page
    assert "<strong>as alice</strong>" in page
    assert "alice's Claude Code" in page
    assert REDIRECT in page
    assert response["X-Frame-Options"] == "DENY"


def test_only_the_consent_page_lets_the_browser_on_to_the_clients_address(logged_in: Client) -> None:
    client_id = register(logged_in)["client_id"]
    consent = logged_in.get("/oauth/authorize/?" + urlencode(authorization(client_id, pkce()[1])))
    dashboard = logged_in.get("/")

    def form_action(response: Any) -> list[str]:
        policy = dict(part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";"))
        sources: list[str] = policy["form-action"].split()
        return sources

    assert form_action(consent) == ["'self'", "http://127.0.0.1:33418"]
    assert form_action(dashboard) == ["'self'"]


def test_an_allowed_client_gets_a_token_bound_to_this_servers_mcp(signed_in: tuple[Client, str, str, str]) -> None:
    browser, client_id, code, verifier = signed_in

    response = exchange(browser, client_id, code, verifier)

    assert response.status_code == 200, response.content
    issued = response.json()
    assert issued["refresh_token"]
    assert issued["scope"] == "mcp"
    access = get_access_token_model().objects.get(application__client_id=client_id, scope="mcp")
    assert access.resource == [RESOURCE]
    agent = oauth.authenticate(issued["access_token"], RESOURCE)
    assert agent is not None
    assert agent.name == "alice's Claude Code"
    assert agent.user is not None
    assert agent.user.get_username() == "alice"
    assert oauth.authenticate(issued["access_token"], "http://testserver/mcp/clifford") == agent
    assert oauth.authenticate(issued["access_token"], "http://other.example/mcp") is None
    assert oauth.authenticate(issued["access_token"], "http://testserver/api") is None


def test_one_person_and_client_are_one_agent(signed_in: tuple[Client, str, str, str]) -> None:
    browser, client_id, code, verifier = signed_in
    first = exchange(browser, client_id, code, verifier).json()["access_token"]
    verifier, challenge = pkce()
    second = exchange(browser, client_id, allow(browser, authorization(client_id, challenge)), verifier).json()

    assert oauth.authenticate(first, RESOURCE) == oauth.authenticate(second["access_token"], RESOURCE)
    assert AgentToken.objects.filter(oauth_client__client_id=client_id).count() == 1


def test_a_wrong_verifier_gets_nothing(signed_in: tuple[Client, str, str, str]) -> None:
    browser, client_id, code, _ = signed_in

    response = exchange(browser, client_id, code, pkce()[0])

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"
    assert not get_access_token_model().objects.filter(scope="mcp").exists()


@pytest.mark.parametrize("wrong", ["verifier", "redirect", "client"])
def test_a_failed_exchange_burns_the_code_so_the_right_verifier_gets_nothing_after_it(
    signed_in: tuple[Client, str, str, str], wrong: str
) -> None:
    """Issue 54: a code is single-use whatever happens: a try with a wrong verifier, redirect or client spends it."""
    browser, client_id, code, verifier = signed_in
    if wrong == "verifier":
        failed = exchange(browser, client_id, code, pkce()[0])
    elif wrong == "redirect":
        failed = exchange(browser, client_id, code, verifier, redirect_uri="http://127.0.0.1:9/elsewhere")
    else:
        failed = exchange(browser, register(browser, "Another client")["client_id"], code, verifier)
    assert failed.status_code in (400, 401)

    right = exchange(browser, client_id, code, verifier)

    assert right.status_code == 400
    assert right.json()["error"] == "invalid_grant"
    assert not get_access_token_model().objects.filter(scope="mcp").exists()


def test_a_missing_verifier_gets_nothing(signed_in: tuple[Client, str, str, str]) -> None:
    browser, client_id, code, _ = signed_in

    response = exchange(browser, client_id, code, "")

    assert response.status_code == 400
    assert not get_access_token_model().objects.filter(scope="mcp").exists()


def test_a_code_works_once(signed_in: tuple[Client, str, str, str]) -> None:
    browser, client_id, code, verifier = signed_in
    assert exchange(browser, client_id, code, verifier).status_code == 200

    again = exchange(browser, client_id, code, verifier)

    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
    # A replayed code leaked: what its first use issued is revoked too (RFC 6749 §4.1.2).
    assert get_access_token_model().objects.filter(scope="mcp").count() == 0


def test_a_replayed_code_revokes_the_tokens_it_issued_and_their_refreshes(
    signed_in: tuple[Client, str, str, str],
) -> None:
    browser, client_id, code, verifier = signed_in
    issued = exchange(browser, client_id, code, verifier).json()
    refreshed = browser.post(
        "/oauth/token/",
        {"grant_type": "refresh_token", "refresh_token": issued["refresh_token"], "client_id": client_id,
         "resource": RESOURCE},
    )  # fmt: skip
    assert refreshed.status_code == 200
    newer = refreshed.json()
    assert oauth.authenticate(newer["access_token"], RESOURCE) is not None

    assert exchange(browser, client_id, code, verifier).status_code == 400

    assert oauth.authenticate(issued["access_token"], RESOURCE) is None
    assert oauth.authenticate(newer["access_token"], RESOURCE) is None
    again = browser.post(
        "/oauth/token/",
        {"grant_type": "refresh_token", "refresh_token": newer["refresh_token"], "client_id": client_id,
         "resource": RESOURCE},
    )  # fmt: skip
    assert again.status_code == 400


def test_without_pkce_no_code_is_issued(logged_in: Client) -> None:
    client_id = register(logged_in)["client_id"]
    params = authorization(client_id, "", code_challenge_method="")

    response = logged_in.get("/oauth/authorize/?" + urlencode(params))

    assert response.status_code == 302
    assert parse_qs(urlsplit(response["Location"]).query)["error"] == ["invalid_request"]
    assert not get_grant_model().objects.exists()


def test_plain_pkce_is_refused_before_and_after_the_consent(logged_in: Client) -> None:
    client_id = register(logged_in)["client_id"]
    params = authorization(client_id, pkce()[1], code_challenge_method="plain")

    asked = logged_in.get("/oauth/authorize/?" + urlencode(params))
    forced = logged_in.post("/oauth/authorize/", data={**params, "allow": "Authorize"})

    # The client and its address are known: the error goes back to it (RFC 6749 §4.1.2.1), without a code.
    for response in (asked, forced):
        assert response.status_code == 302
        sent_back = parse_qs(urlsplit(response["Location"]).query)
        assert response["Location"].startswith(REDIRECT + "?")
        assert sent_back["error"] == ["invalid_request"]
        assert "code_challenge_method must be S256" in sent_back["error_description"][0]
        assert (sent_back["state"], sent_back["iss"]) == (["s-1"], ["http://testserver"])
        assert "code" not in sent_back
    assert not get_grant_model().objects.exists()


def test_a_wrong_redirect_address_is_never_redirected_to(logged_in: Client) -> None:
    client_id = register(logged_in)["client_id"]
    params = authorization(client_id, pkce()[1], redirect_uri="http://evil.example/callback")

    response = logged_in.get("/oauth/authorize/?" + urlencode(params))

    assert response.status_code == 400
    assert "evil.example" not in response.get("Location", "")
    assert not get_grant_model().objects.exists()


def test_an_unknown_client_gets_no_code(logged_in: Client) -> None:
    response = logged_in.get("/oauth/authorize/?" + urlencode(authorization("no-such-client", pkce()[1])))

    assert response.status_code == 400
    assert not get_grant_model().objects.exists()


def test_a_token_for_another_server_is_refused_at_the_consent(logged_in: Client) -> None:
    client_id = register(logged_in)["client_id"]
    params = authorization(client_id, pkce()[1], resource="http://other.example/mcp")

    asked = logged_in.get("/oauth/authorize/?" + urlencode(params))
    forced = logged_in.post("/oauth/authorize/", data={**params, "allow": "Authorize"})

    for response in (asked, forced):
        assert response.status_code == 302
        sent_back = parse_qs(urlsplit(response["Location"]).query)
        assert sent_back["error"] == ["invalid_target"]
        assert "code" not in sent_back
    assert not get_grant_model().objects.exists()


def test_an_unknown_client_with_a_foreign_resource_gets_our_own_page(logged_in: Client) -> None:
    params = authorization("no-such-client", pkce()[1], resource="http://other.example/mcp")
    response = logged_in.get("/oauth/authorize/?" + urlencode(params))
    assert response.status_code == 400
    assert b"invalid_target" in response.content
    assert "Location" not in response


def test_a_token_for_another_server_is_refused_at_the_token_endpoint_too(
    signed_in: tuple[Client, str, str, str],
) -> None:
    browser, client_id, code, verifier = signed_in
    # The authorization request named no foreign resource; the token request does.
    response = browser.post(
        "/oauth/token/",
        {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": client_id,
         "code_verifier": verifier, "resource": "http://other.example/mcp"},
    )  # fmt: skip
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_target"
    assert not get_access_token_model().objects.filter(scope="mcp").exists()


def test_the_consent_page_is_shown_whatever_approval_prompt_says(logged_in: Client) -> None:
    client_id = register(logged_in)["client_id"]
    verifier, challenge = pkce()
    exchange(logged_in, client_id, allow(logged_in, authorization(client_id, challenge)), verifier)
    # Approved once already: approval_prompt=auto must not skip the person's consent the second time.
    params = authorization(client_id, pkce()[1], approval_prompt="auto")
    response = logged_in.get("/oauth/authorize/?" + urlencode(params))
    assert response.status_code == 200
    assert b'name="allow"' in response.content


def test_the_metadata_lists_exactly_what_is_served(client: Client) -> None:
    document = client.get("/.well-known/oauth-authorization-server").json()
    assert document["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert document["response_types_supported"] == ["code"]
    assert "none" in document["token_endpoint_auth_methods_supported"]
    assert not any("device" in key for key in document)


@pytest.mark.parametrize("grant", ["client_credentials", "urn:ietf:params:oauth:grant-type:device_code", "password"])
def test_registration_refuses_grants_not_served(client: Client, grant: str) -> None:
    body = {"client_name": "bot", "redirect_uris": [REDIRECT], "grant_types": [grant],
            "token_endpoint_auth_method": "none"}  # fmt: skip
    response = client.post("/oauth/register/", data=json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"
    assert grant[:20] in response.json()["error_description"]
    assert not get_application_model().objects.exists()


def test_the_registration_answer_echoes_what_was_registered(client: Client) -> None:
    registered = register(client)
    assert registered["scope"] == "mcp"
    assert registered["application_type"] == "native"
    assert isinstance(registered["client_id_issued_at"], int)
    assert registered["grant_types"] == ["authorization_code", "refresh_token"]
    assert registered["token_endpoint_auth_method"] == "none"


def test_registration_is_limited_per_address(client: Client, settings: Any) -> None:
    settings.HOOKBRIDGE_OAUTH_REGISTRATIONS_PER_HOUR = 3
    for n in range(3):
        register(client, f"client {n}")
    body = {"client_name": "one more", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    refused = client.post("/oauth/register/", data=json.dumps(body), content_type="application/json")
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert "HOOKBRIDGE_OAUTH_REGISTRATIONS_PER_HOUR" in refused.json()["error_description"]
    assert get_application_model().objects.count() == 3
    # Another address is not held up by this one's.
    other = client.post(
        "/oauth/register/", data=json.dumps(body), content_type="application/json", REMOTE_ADDR="127.0.0.9"
    )
    assert other.status_code == 201


def test_a_revoked_token_no_longer_signs_in(signed_in: tuple[Client, str, str, str]) -> None:
    browser, client_id, code, verifier = signed_in
    issued = exchange(browser, client_id, code, verifier).json()

    revoked = browser.post("/oauth/revoke/", data={"token": issued["access_token"], "client_id": client_id})

    assert revoked.status_code == 200
    assert oauth.authenticate(issued["access_token"], RESOURCE) is None


def test_a_deactivated_person_signs_nobody_in(signed_in: tuple[Client, str, str, str]) -> None:
    browser, client_id, code, verifier = signed_in
    issued = exchange(browser, client_id, code, verifier).json()

    User.objects.filter(username="alice").update(is_active=False)

    assert oauth.authenticate(issued["access_token"], RESOURCE) is None


def test_the_mcp_challenge_says_where_to_sign_in() -> None:
    assert oauth.challenge("https://hooks.example.com", "/mcp/clifford", error="invalid_token") == (
        'Bearer error="invalid_token", '
        'resource_metadata="https://hooks.example.com/.well-known/oauth-protected-resource/mcp/clifford", '
        'scope="mcp"'
    )


def test_a_plaintext_address_off_this_computer_gets_no_code(logged_in: Client) -> None:
    application = get_application_model().objects.create(
        name="Remote",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://agents.example/callback",
    )
    params = authorization(application.client_id, pkce()[1], redirect_uri="http://agents.example/callback")

    response = logged_in.get("/oauth/authorize/?" + urlencode(params))

    assert response.status_code == 400
    assert b"redirect_uri: http only to this computer" in response.content
    assert not get_grant_model().objects.exists()


CLIENT_DOCUMENT = "https://claude.example/oauth/client.json"


class ClientDocuments:
    """The client's own web server, as the library's fetcher would reach it: (metadata, max-age)."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        assert client_id == CLIENT_DOCUMENT
        metadata = {
            "client_id": CLIENT_DOCUMENT,
            "client_name": "Claude Code",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
        return metadata, 300


def test_a_client_may_name_itself_by_its_metadata_document(logged_in: Client, settings: Any) -> None:
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "CIMD_METADATA_FETCHER": f"{__name__}.ClientDocuments"}
    assert logged_in.get("/.well-known/oauth-authorization-server").json()["client_id_metadata_document_supported"]
    verifier, challenge = pkce()
    params = authorization(CLIENT_DOCUMENT, challenge)
    consent = logged_in.get("/oauth/authorize/?" + urlencode(params))
    assert consent.status_code == 200
    assert b'Allow <span class="client-name">Claude Code</span>?' in consent.content

    code = allow(logged_in, params)
    issued = exchange(logged_in, CLIENT_DOCUMENT, code, verifier).json()

    agent = oauth.authenticate(issued["access_token"], RESOURCE)
    assert agent is not None
    assert agent.name == "alice's Claude Code"


class UnreachableDocuments(ReportingFetcher):
    """The client's host answers 404 for its document, as the library's fetcher would report it."""

    def fetch_document(self, client_id: str) -> tuple[dict[str, Any], int]:
        raise CIMDError("client_id document returned HTTP 404")


def test_a_document_that_cannot_be_fetched_is_refused_naming_the_host_and_why(logged_in: Client, settings: Any) -> None:
    settings.OAUTH2_PROVIDER = {
        **settings.OAUTH2_PROVIDER, "CIMD_METADATA_FETCHER": f"{__name__}.UnreachableDocuments"
    }  # fmt: skip
    document = "https://gone.example/oauth/client-404.json"
    response = logged_in.get("/oauth/authorize/?" + urlencode(authorization(document, pkce()[1])))
    assert response.status_code == 400
    assert b"metadata document at gone.example could not be used" in response.content
    assert b"returned HTTP 404" in response.content
    assert not get_application_model().objects.filter(client_id=document).exists()
    # Both ways out, not "start again", which fails the same way (issue 55, point 13).
    shown = response.content.decode()
    assert "Start again from the agent that sent you here" not in shown
    assert "What you can do" in shown
    assert "Connect the agent with a token instead" in shown
    assert "What the server's admin can do" in shown
    assert "let it reach gone.example over https" in shown
    assert "HOOKBRIDGE_OAUTH_CLIENT_DOCUMENTS=0" in shown


def test_with_documents_off_a_document_client_is_told_the_setting(logged_in: Client, settings: Any) -> None:
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "CIMD_ENABLED": False}
    response = logged_in.get("/oauth/authorize/?" + urlencode(authorization(CLIENT_DOCUMENT, pkce()[1])))
    assert response.status_code == 400
    assert b"HOOKBRIDGE_OAUTH_CLIENT_DOCUMENTS=0" in response.content
    assert b"claude.example" in response.content
