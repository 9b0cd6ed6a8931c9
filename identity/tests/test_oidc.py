"""The callback's checks, against a provider whose every answer the test writes: a small OpenID provider the test
starts on localhost (discovery, keys, token endpoint) with an ID token signed by its own RSA key. What oidc-provider
never sends (a token for another audience, signed by another key, expired, for another nonce) is refused by name
and signs nobody in; and who a sign-in is: found by subject, SCIM's person linked, a local account never taken."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.checks import run_checks
from django.test import Client

from identity import roles
from identity.models import Identity, sign_in
from projects.models import Membership, MembershipSource, Project, Role
from testing import idp

CLIENT_ID = idp.CLIENT_ID


@pytest.fixture
def fake(settings: Any, db: Any) -> Iterator[idp.SigningIssuer]:
    provider = idp.SigningIssuer()
    settings.HOOKBRIDGE_OIDC_ISSUER = provider.issuer
    settings.HOOKBRIDGE_OIDC_CLIENT_ID = CLIENT_ID
    settings.HOOKBRIDGE_OIDC_CLIENT_SECRET = "secret"
    settings.HOOKBRIDGE_OIDC_ROLES = "shop-answerers=shop:answerer"
    User.objects.create_superuser("first-admin", password="a-long-local-password")
    Project.objects.create(name="shop")
    yield provider
    provider.server.shutdown()


def started(client: Client) -> dict[str, str]:
    """Hook Bridge's redirect to the provider, read as the provider would: state, nonce, PKCE."""
    response = client.get("/sso/login")
    assert response.status_code == 302
    query = {key: values[0] for key, values in parse_qs(urlsplit(response["Location"]).query).items()}
    assert query["code_challenge_method"] == "S256"
    assert query["redirect_uri"] == "http://testserver/sso/callback"
    return query


def claims(fake: idp.SigningIssuer, query: dict[str, str], **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    return {
        "iss": fake.issuer, "aud": CLIENT_ID, "sub": "acme|erin", "iat": now, "exp": now + 300,
        "nonce": query["nonce"], "email": "erin@acme.example", "email_verified": True, "name": "Erin Brockovich",
        "groups": ["shop-answerers"], **changes,
    }  # fmt: skip


def test_a_good_id_token_signs_the_person_in_with_their_groups_role(fake: idp.SigningIssuer) -> None:
    client = Client()
    query = started(client)
    fake.claims = claims(fake, query)
    response = client.get("/sso/callback", {"code": "c", "state": query["state"]})
    assert response.status_code == 302
    person = User.objects.get(identity__subject="acme|erin")
    assert person.email == "erin@acme.example"
    assert (person.first_name, person.last_name) == ("Erin", "Brockovich")
    assert Membership.objects.get(user=person, project__name="shop").role == Role.ANSWERER


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"aud": "another-app"}, "made for another application"),
        ({"aud": "another-app", "azp": CLIENT_ID}, "made for another application"),  # Authlib alone let it in
        ({"aud": [CLIENT_ID, "another-app"]}, "did not pass its checks"),  # two audiences and no azp
        ({"iss": "https://evil.example"}, "came from another issuer"),
        ({"nonce": "not-this-browsers"}, "did not match the one this browser started"),
        ({"exp": int(time.time()) - 3600, "iat": int(time.time()) - 4000}, "do not fit this server"),
    ],
)
def test_a_token_that_fails_a_check_is_refused_by_name_and_signs_nobody_in(
    fake: idp.SigningIssuer, change: dict[str, Any], said: str
) -> None:
    client = Client()
    query = started(client)
    fake.claims = claims(fake, query, **change)
    response = client.get("/sso/callback", {"code": "c", "state": query["state"]})
    assert response.status_code == 400
    assert said in response.content.decode().replace("&#x27;", "'")
    assert not Identity.objects.exists()
    assert client.get("/").status_code == 302  # still signed out


def test_a_token_signed_by_another_key_is_refused(fake: idp.SigningIssuer) -> None:
    client = Client()
    query = started(client)
    fake.claims, fake.sign_with = claims(fake, query), fake.other
    response = client.get("/sso/callback", {"code": "c", "state": query["state"]})
    assert response.status_code == 400
    assert "did not pass its checks" in response.content.decode()
    assert not Identity.objects.exists()


def test_the_providers_refusal_of_the_client_is_named_for_the_admin(fake: idp.SigningIssuer) -> None:
    client = Client()
    query = started(client)
    fake.token_status, fake.token_body = 401, {"error": "invalid_client", "error_description": "client auth failed"}
    response = client.get("/sso/callback", {"code": "c", "state": query["state"]})
    assert response.status_code == 502
    assert "HOOKBRIDGE_OIDC_CLIENT_SECRET" in response.content.decode()


def test_a_provider_that_cannot_be_reached_is_said_and_nothing_breaks(settings: Any, db: Any) -> None:
    settings.HOOKBRIDGE_OIDC_ISSUER = "http://127.0.0.1:9"  # discard: nothing listens
    settings.HOOKBRIDGE_OIDC_CLIENT_ID = CLIENT_ID
    response = Client().get("/sso/login")
    assert response.status_code == 502
    assert "could not read the identity provider" in response.content.decode()


def test_sign_in_links_the_person_scim_made_but_never_a_local_account(db: Any, settings: Any) -> None:
    User.objects.create_superuser("first-admin", password="a-long-local-password")
    local = User.objects.create_user("frank@acme.example", email="frank@acme.example", password="a-long-password-1")
    scimmed = User.objects.create_user("gina@acme.example", email="gina@acme.example")
    Identity.objects.create(user=scimmed, provisioned=True)
    fields: dict[str, Any] = {"email_verified": True, "first_name": "", "last_name": "", "display_name": "",
                              "groups": None}  # fmt: skip
    frank = sign_in("https://idp", "sub-frank", email="frank@acme.example", username="frank@acme.example", **fields)
    gina = sign_in("https://idp", "sub-gina", email="gina@acme.example", username="gina@acme.example", **fields)
    assert frank.pk != local.pk  # a local account with that e-mail is not the provider's to sign in as
    assert frank.username == "frank@acme.example-2"
    assert gina.pk == scimmed.pk
    assert sign_in("https://idp", "sub-gina", email="gina@acme.example", username="x", **fields).pk == scimmed.pk


def test_an_unverified_email_links_nobody(db: Any) -> None:
    User.objects.create_superuser("first-admin", password="a-long-local-password")
    scimmed = User.objects.create_user("hal", email="hal@acme.example")
    Identity.objects.create(user=scimmed, provisioned=True)
    person = sign_in("https://idp", "sub-hal", email="hal@acme.example", email_verified=False, username="",
                     first_name="", last_name="", display_name="", groups=None)  # fmt: skip
    assert person.pk != scimmed.pk


def test_roles_follow_groups_at_each_sign_in_and_by_hand_roles_stay(db: Any, settings: Any) -> None:
    settings.HOOKBRIDGE_OIDC_ROLES = "shop-answerers=shop:answerer,shop-admins=shop:admin,ops=ops:viewer"
    User.objects.create_superuser("first-admin", password="a-long-local-password")
    shop, ops = Project.objects.create(name="shop"), Project.objects.create(name="ops")
    fields: dict[str, Any] = {"email": "ivy@acme.example", "email_verified": True, "username": "ivy", "first_name": "",
              "last_name": "", "display_name": ""}  # fmt: skip
    ivy = sign_in("https://idp", "sub-ivy", groups=["shop-answerers", "shop-admins"], **fields)
    assert Membership.objects.get(user=ivy, project=shop).role == Role.ADMIN  # the highest of two
    ops.set_member(ivy, Role.ADMIN)  # by hand
    sign_in("https://idp", "sub-ivy", groups=["ops"], **fields)
    assert not Membership.objects.filter(user=ivy, project=shop).exists()
    held = Membership.objects.get(user=ivy, project=ops)
    assert (held.role, held.source) == (Role.ADMIN, MembershipSource.BY_HAND)
    sign_in("https://idp", "sub-ivy", groups=None, **fields)  # no claim: the groups stay as they were
    assert ivy.directory_groups.get().display_name == "ops"


def test_oidc_only_lets_only_the_break_glass_people_use_a_password(db: Any, settings: Any) -> None:
    User.objects.create_user("jo", password="a-long-local-password")
    User.objects.create_user("kim", password="a-long-local-password")
    settings.HOOKBRIDGE_OIDC_ONLY = True
    settings.HOOKBRIDGE_BREAK_GLASS_USERS = ["Kim"]
    assert not Client().login(username="jo", password="a-long-local-password")
    assert Client().login(username="kim", password="a-long-local-password")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("shop-answerers=shop", "is not GROUP=PROJECT:ROLE"),
        ("a=shop:owner", "must be one of"),
        ("=shop:admin", "is not GROUP=PROJECT:ROLE"),
    ],
)
def test_a_bad_role_mapping_is_a_start_up_error_naming_the_entry(settings: Any, text: str, said: str) -> None:
    settings.HOOKBRIDGE_OIDC_ROLES = text
    with pytest.raises(ValueError, match=said):
        roles.parse(text)
    assert [m.id for m in run_checks() if str(m.id).startswith("identity.")] == ["identity.E001"]


def test_oidc_only_without_a_provider_and_half_a_provider_are_start_up_errors(settings: Any) -> None:
    settings.HOOKBRIDGE_OIDC_ONLY = True
    settings.HOOKBRIDGE_OIDC_ISSUER = "https://idp.acme.example"
    found = sorted(str(m.id) for m in run_checks() if str(m.id).startswith("identity."))
    assert found == ["identity.E002", "identity.E003"]


def test_a_person_with_no_email_or_username_is_named_by_their_name_never_the_subject(db: Any) -> None:
    User.objects.create_superuser("first-admin", password="a-long-local-password")
    person = sign_in("https://idp", "00u1a2b3c4opaque", email="", email_verified=False, username="", first_name="Lee",
                     last_name="Smith", display_name="Lee Smith", groups=None)  # fmt: skip
    assert person.username == "Lee-Smith"
    assert "00u1a2b3c4opaque" not in person.get_username()
