"""Signing in with the company's identity provider (issue 57), over HTTP against panva's oidc-provider started by
the test: the login page's button, the provider's pages, the callback's checks, the roles its groups give, and
every way it goes wrong told in words a person can act on."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
import pytest

from testing import idp
from testing.live import PASSWORD, LiveServer, free_port

pytestmark = pytest.mark.skipif(idp.missing() is not None, reason=str(idp.missing()))

PEOPLE = {
    "alice": {"email": "alice@acme.test", "name": "Alice Liddell", "given_name": "Alice", "family_name": "Liddell",
              "groups": ["shop-answerers", "everyone"]},
    "bob": {"email": "bob@acme.test", "name": "Bob Marley", "groups": ["marketing"]},
}  # fmt: skip
ROLES = "shop-answerers=shop:answerer,shop-admins=shop:admin"


@contextmanager
def signing_in(clock_offset: int = 0, **env: str) -> Iterator[tuple[LiveServer, idp.Provider]]:
    """A provider and a Hook Bridge server registered with it (the callback on the server's own port)."""
    port = free_port()
    with idp.provider(PEOPLE, [f"http://127.0.0.1:{port}/sso/callback"], clock_offset=clock_offset) as provider:
        server = LiveServer(port=port, env_overrides=provider.settings(HOOKBRIDGE_OIDC_ROLES=ROLES, **env))
        server.setup()
        try:
            server.manage("project", "create", "shop")
            yield server, provider
        finally:
            server.close()


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[LiveServer, idp.Provider]]:
    with signing_in(HOOKBRIDGE_OIDC_ONLY="1", HOOKBRIDGE_BREAK_GLASS_USERS="alice") as both:
        yield both


def roles_of(server: LiveServer, username: str) -> str:
    script = (
        "from projects.models import Membership;"
        f"print(sorted((m.project.name, m.role, m.source) for m in Membership.objects.filter(user__username='{username}')))"
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
        assert 'name="hookbridge-user" content="alice@acme.test"' in dashboard.text
        assert "acme|alice" not in dashboard.text  # the provider's subject is never what people see
    assert roles_of(server, "alice@acme.test") == "[('shop', 'answerer', 'directory')]"


def test_a_second_sign_in_is_the_same_person_and_follows_their_groups(world: tuple[LiveServer, idp.Provider]) -> None:
    server, provider = world
    with httpx2.Client() as http:
        assert idp.sign_in(http, server.url, "alice").status_code == 302
    count = "from django.contrib.auth.models import User; print(User.objects.filter(email='alice@acme.test').count())"
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
    assert roles_of(server, "bob@acme.test") == "[]"


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
        assert "Sign in with" not in httpx2.get(f"{server.url}/accounts/login/").text
    finally:
        server.close()
