"""The identity rows in the admin: superusers only; a SCIM token shown once, working, and revoked there."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from audit.models import Entry
from identity.models import DirectoryGroup, Identity, ScimToken


def test_a_scim_token_made_in_the_admin_is_shown_once_works_and_is_revoked_there(db: Any) -> None:
    admin = Client()
    admin.force_login(User.objects.create_superuser("root", password="a-long-local-password"))
    made = admin.post("/admin/identity/scimtoken/add/", {"name": "Okta production"}, follow=True)
    shown = re.search(r"hbscim_[\w-]+", made.content.decode())
    assert shown, made.content.decode()[:2000]
    token = shown.group(0)
    row = ScimToken.objects.get(name="Okta production")
    assert token not in row.token_hash  # only its digest is kept
    assert Client(HTTP_AUTHORIZATION=f"Bearer {token}").get("/scim/v2/Users").status_code == 200
    listed = admin.get("/admin/identity/scimtoken/")
    assert token not in listed.content.decode()  # never shown again
    admin.post("/admin/identity/scimtoken/", {"action": "revoke", "_selected_action": [row.pk]})
    assert Client(HTTP_AUTHORIZATION=f"Bearer {token}").get("/scim/v2/Users").status_code == 401
    assert [e.action for e in Entry.objects.filter(action__startswith="scim_token.").order_by("seq")] == [
        "scim_token.created", "scim_token.changed",
    ]  # fmt: skip


def test_only_superusers_see_the_directory(db: Any) -> None:
    staff = User.objects.create_user("staff", password="a-long-local-password", is_staff=True)
    person = User.objects.create_user("ann@acme.example")
    Identity.objects.create(user=person, subject="acme|ann", provisioned=True)
    DirectoryGroup.objects.create(display_name="shop-answerers").members.add(person)
    client = Client()
    client.force_login(staff)
    for path in ("/admin/identity/identity/", "/admin/identity/directorygroup/", "/admin/identity/scimtoken/"):
        assert client.get(path).status_code == 403, path
    client.force_login(User.objects.create_superuser("root", password="a-long-local-password"))
    group = client.get(f"/admin/identity/directorygroup/{DirectoryGroup.objects.get().pk}/change/")
    assert "ann@acme.example" in group.content.decode()
    identities = client.get("/admin/identity/identity/")
    assert "acme|ann" in identities.content.decode()
