"""Signing in with the company's identity provider (issue 57), over HTTP against panva's oidc-provider started by
the test: the login page's button, the provider's pages, the callback's checks, the roles its groups give, and
every way it goes wrong told in words a person can act on."""

from __future__ import annotations

import asyncio
import html
import json
import re
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx2
import pytest
import websockets
from websockets.typing import Origin

from testing import idp
from testing.live import PASSWORD, LiveServer, closed_with

pytestmark = pytest.mark.skipif(idp.missing() is not None, reason=str(idp.missing()))

PEOPLE: dict[str, dict[str, Any]] = {
    "alice": {"email": "alice@acme.example", "name": "Alice Liddell", "given_name": "Alice", "family_name": "Liddell",
              "groups": ["shop-answerers", "everyone"]},
    "bob": {"email": "bob@acme.example", "name": "Bob Marley", "groups": ["marketing"]},
    # No groups claim: SCIM's groups say where she belongs.
    "dana": {"email": "dana@acme.example", "name": "Dana Scully", "preferred_username": "dana@acme.example"},
}  # fmt: skip
ROLES = "shop-answerers=shop:answerer,shop-admins=shop:admin"
SCIM_TOKEN = "scim-token-of-the-sign-in-tests-0123456789"
REVOKED = 4410


def signing_in(clock_offset: int = 0, **env: str) -> AbstractContextManager[tuple[LiveServer, idp.Provider]]:
    return idp.hookbridge_with(PEOPLE, clock_offset=clock_offset, HOOKBRIDGE_OIDC_ROLES=ROLES, **env)


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[LiveServer, idp.Provider]]:
    with signing_in(
        HOOKBRIDGE_OIDC_ONLY="1", HOOKBRIDGE_BREAK_GLASS_USERS="alice", HOOKBRIDGE_SCIM_TOKEN=SCIM_TOKEN
    ) as both:
        yield both


def roles_of(server: LiveServer, username: str) -> str:
    script = (
        "from projects.models import Membership;"
        f"held = Membership.objects.filter(user__username='{username}');"
        "print(sorted((m.project.name, m.role, m.source) for m in held))"
    )
    return server.manage("shell", "-v", "0", "-c", script).strip()


def test_the_login_page_offers_the_provider_first(world: tuple[LiveServer, idp.Provider]) -> None:
    server, _ = world
    page = httpx2.get(f"{server.url}/accounts/login/?next=/history/")
    assert "Sign in with Acme" in page.text
    assert 'href="/sso/login?next=/history/"' in page.text
    admin = httpx2.get(f"{server.url}/admin/login/")
    assert f"{server.url}/sso/callback" in admin.text  # what an admin registers at the provider


def test_signing_in_lands_on_the_dashboard_as_an_answerer_in_shop(world: tuple[LiveServer, idp.Provider]) -> None:
    server, _ = world
    with httpx2.Client() as http:
        landed = idp.sign_in(http, server.url, "alice")
        assert landed.status_code == 302, landed.text[:500]
        assert landed.headers["location"] == "/"
        dashboard = http.get(f"{server.url}/")
        assert dashboard.status_code == 200
        assert 'name="hookbridge-user" content="alice@acme.example"' in dashboard.text
        assert "acme|alice" not in dashboard.text  # the provider's subject is never what people see
    assert roles_of(server, "alice@acme.example") == "[('shop', 'answerer', 'directory')]"


def test_a_second_sign_in_is_the_same_person_and_follows_their_groups(world: tuple[LiveServer, idp.Provider]) -> None:
    server, _provider = world
    with httpx2.Client() as http:
        assert idp.sign_in(http, server.url, "alice").status_code == 302
    count = (
        "from django.contrib.auth.models import User; print(User.objects.filter(email='alice@acme.example').count())"
    )
    assert server.manage("shell", "-v", "0", "-c", count).strip() == "1"


def test_a_used_callback_is_refused_and_says_to_start_again(world: tuple[LiveServer, idp.Provider]) -> None:
    server, _ = world
    with httpx2.Client() as http:
        seen: list[str] = []
        http.event_hooks["request"] = [lambda request: seen.append(str(request.url))]
        assert idp.sign_in(http, server.url, "alice").status_code == 302
        callback = next(url for url in seen if "/sso/callback?" in url)
        again = http.get(callback)
    assert again.status_code == 400
    assert "already used" in again.text
    assert "Start again" in again.text


def test_a_person_in_no_mapped_group_is_told_to_ask_for_their_group(world: tuple[LiveServer, idp.Provider]) -> None:
    server, _ = world
    with httpx2.Client() as http:
        page = idp.sign_in(http, server.url, "bob")
    assert page.status_code == 200
    assert "signed in, but in no project" in page.text
    assert "Ask your admin to add your group" in page.text
    assert "marketing" in page.text
    assert roles_of(server, "bob@acme.example") == "[]"


def test_oidc_only_refuses_passwords_but_the_break_glass_accounts(world: tuple[LiveServer, idp.Provider]) -> None:
    server, _ = world
    made = server.run_manage("shell", "-c", "from django.contrib.auth.models import User; "
                             f"User.objects.create_user('carol', password='{PASSWORD}')")  # fmt: skip
    assert made.returncode == 0, made.stderr
    for username, works in (("carol", False), ("alice", True)):
        with httpx2.Client(base_url=server.url) as http:
            page = http.get("/accounts/login/")
            csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
            assert csrf
            sent = http.post("/accounts/login/", data={"username": username, "password": PASSWORD,
                                                       "csrfmiddlewaretoken": csrf.group(1)})  # fmt: skip
            assert (sent.status_code == 302) is works, (username, sent.status_code)
            if not works:
                assert "passwords are off on this server" in sent.text


def test_logging_out_signs_out_at_the_provider_too(world: tuple[LiveServer, idp.Provider]) -> None:
    server, provider = world
    with httpx2.Client() as http:
        assert idp.sign_in(http, server.url, "alice").status_code == 302
        page = http.get(f"{server.url}/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert csrf
        out = http.post(f"{server.url}/accounts/logout/", data={"csrfmiddlewaretoken": csrf.group(1)})
        assert out.status_code == 302
        location = out.headers["location"]
        assert location.startswith(f"{provider.issuer}/session/end")
        assert "id_token_hint=" in location
        assert "post_logout_redirect_uri=" in location
        assert http.get(f"{server.url}/").status_code == 302  # signed out here


def test_a_wrong_client_secret_is_named_for_the_admin() -> None:
    with signing_in(HOOKBRIDGE_OIDC_CLIENT_SECRET="not-the-secret") as (server, _), httpx2.Client() as http:
        page = idp.sign_in(http, server.url, "alice")
    assert page.status_code == 502
    assert "refused this server's client credentials" in html.unescape(page.text)
    assert "HOOKBRIDGE_OIDC_CLIENT_SECRET" in page.text


def test_a_provider_whose_clock_is_ten_minutes_ahead_is_named_as_clock_skew() -> None:
    with signing_in(clock_offset=600) as (server, _), httpx2.Client() as http:
        page = idp.sign_in(http, server.url, "alice")
    assert page.status_code == 400
    assert "do not fit this server's clock" in html.unescape(page.text)
    assert "HOOKBRIDGE_OIDC_LEEWAY" in page.text


def test_without_a_provider_the_sso_addresses_are_not_there() -> None:
    server = LiveServer()
    server.setup()
    try:
        assert httpx2.get(f"{server.url}/sso/login").status_code == 404
        page = httpx2.get(f"{server.url}/accounts/login/").text
        assert "/sso/login" not in page  # no provider's button (the passkey's stays)
        assert "Sign in with a passkey" in page
    finally:
        server.close()


TOKEN_FOR = """
import json
from django.contrib.auth.models import User
from projects.models import Project
from tokens.models import AgentToken, Scope
dana = User.objects.get(username="dana@acme.example")
shop = Project.objects.get(name="shop")
print(json.dumps({"raw": AgentToken.issue("dana-bot", scope=Scope.ANSWER, user=dana, project=shop)[1]}))
"""


async def test_scim_provisions_a_person_who_signs_in_and_deactivating_them_ends_their_token_and_sockets(
    world: tuple[LiveServer, idp.Provider],
) -> None:
    server, _ = world
    scim = {"Authorization": f"Bearer {SCIM_TOKEN}", "Content-Type": "application/scim+json"}
    async with httpx2.AsyncClient(base_url=f"{server.url}/scim/v2", headers=scim, timeout=60) as directory:
        assert (await directory.get("/ServiceProviderConfig")).status_code == 200
        assert (
            await httpx2.AsyncClient(timeout=60).get(f"{server.url}/scim/v2/ServiceProviderConfig")
        ).status_code == 401
        made = await directory.post("/Users", json={
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "dana@acme.example",
            "name": {"givenName": "Dana", "familyName": "Scully"},
            "emails": [{"value": "dana@acme.example", "primary": True}], "active": True})  # fmt: skip
        assert made.status_code == 201, made.text
        dana = made.json()["id"]
        found = (await directory.get("/Users", params={"filter": 'userName eq "dana@acme.example"'})).json()
        assert [user["id"] for user in found["Resources"]] == [dana]
        group = await directory.post("/Groups", json={
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "shop-answerers",
            "members": [{"value": dana}]})  # fmt: skip
        assert group.status_code in {201, 409}, group.text  # alice's sign-in may have made the group already
        if group.status_code == 409:
            listed = (await directory.get("/Groups", params={"filter": 'displayName eq "shop-answerers"'})).json()
            patch = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                     "Operations": [{"op": "add", "path": "members", "value": [{"value": dana}]}]}  # fmt: skip
            assert (await directory.patch(f"/Groups/{listed['Resources'][0]['id']}", json=patch)).status_code == 200
        assert roles_of(server, "dana@acme.example") == "[('shop', 'answerer', 'directory')]"

        browser = httpx2.Client()
        assert (await asyncio.to_thread(idp.sign_in, browser, server.url, "dana")).status_code == 302
        count = (
            "from django.contrib.auth.models import User; print(User.objects.filter(email='dana@acme.example').count())"
        )
        assert server.manage("shell", "-v", "0", "-c", count).strip() == "1"  # the same person SCIM made
        raw = json.loads(server.manage("shell", "-v", "0", "-c", TOKEN_FOR).strip().splitlines()[-1])["raw"]
        bearer = {"Authorization": f"Bearer {raw}"}
        async with httpx2.AsyncClient(headers=bearer, timeout=60) as agent:
            assert (await agent.get(f"{server.url}/api/questions")).status_code == 200
        # The provider's cookies share the host (another port): only Hook Bridge's go with its socket.
        cookie = "; ".join(f"{c.name}={c.value}" for c in browser.cookies.jar if c.name in {"sessionid", "csrftoken"})
        async with (
            websockets.connect(f"ws://127.0.0.1:{server.port}/ws/events/", additional_headers=bearer,
                               origin=Origin(server.url)) as token_socket,
            websockets.connect(f"ws://127.0.0.1:{server.port}/ws/dashboard/", additional_headers={"Cookie": cookie},
                               origin=Origin(server.url)) as page_socket,
        ):  # fmt: skip
            await token_socket.recv()
            await page_socket.recv()
            off = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                   "Operations": [{"op": "replace", "value": {"active": False}}]}  # fmt: skip
            started = time.monotonic()
            patched = await directory.patch(f"/Users/{dana}", json=off)
            assert patched.status_code == 200, patched.text
            assert patched.json()["active"] is False
            # A slow machine is not a bug: wait long, and say how long it took (the bound is 5 s).
            assert await closed_with(token_socket, 30) == REVOKED
            assert await closed_with(page_socket, 30) == REVOKED
            print(f"sockets closed {time.monotonic() - started:.2f} s after the PATCH")
        async with httpx2.AsyncClient(headers=bearer, timeout=60) as agent:
            assert (await agent.get(f"{server.url}/api/questions")).status_code == 401
        assert browser.get(f"{server.url}/").status_code == 302  # the page session ends too
        browser.close()
    assert "Exception inside application" not in server.log()
