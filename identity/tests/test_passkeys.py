"""Passkeys' refusals, without an authenticator: what a forged or replayed answer, another person's passkey or
OIDC_ONLY gets (the real ceremony runs in chromium with a virtual authenticator: tests/browser/test_passkeys.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from identity.models import Passkey


@pytest.fixture
def person(db: Any) -> User:
    return User.objects.create_user("mia", password="a-long-local-password")


def passkey_of(person: User, credential_id: str = "Y3JlZA") -> Passkey:
    return Passkey.objects.create(user=person, name="laptop", credential_id=credential_id, public_key=b"\x01\x02")


def test_the_options_name_this_host_and_ask_for_a_discoverable_verified_passkey(person: User) -> None:
    client = Client()
    client.force_login(person)
    passkey_of(person)
    options = client.post("/account/passkeys/options").json()
    assert options["rp"]["id"] == "testserver"
    assert options["authenticatorSelection"]["residentKey"] == "required"
    assert options["authenticatorSelection"]["userVerification"] == "required"
    assert [c["id"] for c in options["excludeCredentials"]] == ["Y3JlZA"]  # the same device is not added twice


def test_an_answer_with_no_ceremony_started_or_a_forged_one_adds_nothing(person: User) -> None:
    client = Client()
    client.force_login(person)
    forged = {
        "name": "fake",
        "credential": {
            "id": "eA",
            "rawId": "eA",
            "type": "public-key",
            "response": {"clientDataJSON": "e30", "attestationObject": "oA"},
        },
    }
    unstarted = client.post("/account/passkeys/add", json.dumps(forged), content_type="application/json")
    assert unstarted.status_code == 400
    assert unstarted.json()["error"].startswith("credential: no passkey was being added")
    client.post("/account/passkeys/options")
    bad = client.post("/account/passkeys/add", json.dumps(forged), content_type="application/json")
    assert bad.status_code == 400
    assert bad.json()["error"].startswith("credential: the passkey was not accepted")
    junk = client.post("/account/passkeys/add", "not json", content_type="application/json")
    assert junk.status_code == 400
    assert not Passkey.objects.exists()


def test_a_sign_in_with_an_unknown_or_forged_passkey_signs_nobody_in(person: User) -> None:
    passkey_of(person)
    client = Client()
    client.post("/sso/passkey/options")
    unknown = {"credential": {"id": "bm9wZQ", "response": {}}}
    assert client.post("/sso/passkey", json.dumps(unknown), content_type="application/json").status_code == 403
    client.post("/sso/passkey/options")
    forged = {
        "credential": {
            "id": "Y3JlZA",
            "rawId": "Y3JlZA",
            "type": "public-key",
            "response": {"clientDataJSON": "e30", "authenticatorData": "AA", "signature": "AA"},
        }
    }
    assert client.post("/sso/passkey", json.dumps(forged), content_type="application/json").status_code == 403
    replay = client.post("/sso/passkey", json.dumps(forged), content_type="application/json")
    assert replay.status_code == 400  # the challenge went with the first try
    assert client.get("/").status_code == 302


def test_a_deactivated_person_or_oidc_only_refuses_the_passkey_before_checking_it(person: User, settings: Any) -> None:
    passkey_of(person)
    settings.HOOKBRIDGE_OIDC_ONLY = True
    client = Client()
    client.post("/sso/passkey/options")
    body = {"credential": {"id": "Y3JlZA", "response": {}}}
    refused = client.post("/sso/passkey", json.dumps(body), content_type="application/json")
    assert refused.status_code == 403
    assert "not yours to sign in with" in refused.json()["error"]


def test_nobody_removes_another_persons_passkey(person: User) -> None:
    theirs = passkey_of(person)
    other = Client()
    other.force_login(User.objects.create_user("nat", password="a-long-local-password"))
    assert other.post(f"/account/passkeys/{theirs.pk}/remove").status_code == 404
    assert Passkey.objects.filter(pk=theirs.pk).exists()
    mine = Client()
    mine.force_login(person)
    assert mine.post(f"/account/passkeys/{theirs.pk}/remove").status_code == 302
    assert not Passkey.objects.exists()


def test_the_passkeys_page_needs_a_sign_in(db: Any) -> None:
    assert Client().get("/account/passkeys/").status_code == 302
    assert Client().post("/account/passkeys/options").status_code == 302
