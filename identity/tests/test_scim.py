"""/scim/v2 as Okta and Entra ID call it (their documented payloads, tests/fixtures): people and groups made,
found, changed and removed; roles following groups; bad input refused by name with nothing changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from audit.models import Entry
from identity.models import DirectoryGroup, Identity, ScimToken
from projects.models import Membership, MembershipSource, Project, Role
from questions.models import Question
from tokens.models import AgentToken

FIXTURES = Path(__file__).parent / "fixtures"
TOKEN = "scim-token-for-the-tests-0123456789abcdef"
ROLES = "shop-answerers=shop:answerer,shop-admins=shop:admin"


def fixture(name: str, user_id: str = "") -> dict[str, Any]:
    text = (FIXTURES / f"{name}.json").read_text()
    return dict(json.loads(text.replace("USER_ID", user_id)))


@pytest.fixture
def scim(settings: Any, db: Any) -> Client:
    settings.HOOKBRIDGE_SCIM_TOKEN = TOKEN
    settings.HOOKBRIDGE_OIDC_ROLES = ROLES
    User.objects.create_superuser("first-admin", password="a-long-local-password")  # the server's first login
    Project.objects.create(name="shop")
    return Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")


def send(client: Client, method: str, path: str, body: Any = None) -> Any:
    data = json.dumps(body) if body is not None else None
    call = getattr(client, method.lower())
    response = call(f"/scim/v2{path}", data=data, content_type="application/scim+json")
    return response


def made(client: Client, name: str = "okta_create_user") -> dict[str, Any]:
    response = send(client, "POST", "/Users", fixture(name))
    assert response.status_code == 201, response.content
    return dict(response.json())


def test_it_answers_service_provider_config_with_the_token_and_401_without(scim: Client) -> None:
    assert send(scim, "GET", "/ServiceProviderConfig").status_code == 200
    assert send(scim, "GET", "/ServiceProviderConfig").json()["patch"]["supported"] is True
    anonymous = Client().get("/scim/v2/ServiceProviderConfig")
    assert anonymous.status_code == 401
    assert anonymous["WWW-Authenticate"].startswith("Bearer")
    assert anonymous.json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    wrong = Client(HTTP_AUTHORIZATION="Bearer " + TOKEN[:-1] + "x").get("/scim/v2/ServiceProviderConfig")
    assert wrong.status_code == 401


def test_a_token_made_in_the_admin_works_until_revoked(scim: Client, settings: Any) -> None:
    settings.HOOKBRIDGE_SCIM_TOKEN = ""
    row, token = ScimToken.issue("Okta")
    assert Client(HTTP_AUTHORIZATION=f"Bearer {token}").get("/scim/v2/Users").status_code == 200
    row.refresh_from_db()
    assert row.last_used_at is not None
    from django.utils import timezone

    row.revoked_at = timezone.now()
    row.save()
    assert Client(HTTP_AUTHORIZATION=f"Bearer {token}").get("/scim/v2/Users").status_code == 401
    assert Entry.objects.filter(action="scim_token.changed").exists()


def test_the_discovery_endpoints_describe_users_groups_and_the_enterprise_extension(scim: Client) -> None:
    types = send(scim, "GET", "/ResourceTypes").json()
    assert {r["id"] for r in types["Resources"]} == {"User", "Group"}
    schemas = {s["id"] for s in send(scim, "GET", "/Schemas").json()["Resources"]}
    assert "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User" in schemas
    one = send(scim, "GET", "/Schemas/urn:ietf:params:scim:schemas:core:2.0:User")
    assert one.status_code == 200
    assert one.json()["name"] == "User"
    assert send(scim, "GET", "/Schemas/urn:nope").status_code == 404


def test_oktas_user_is_made_without_a_password_or_a_project_and_found_by_its_username(scim: Client) -> None:
    body = made(scim)
    person = User.objects.get(username="test.user@okta.local")
    assert (person.first_name, person.last_name, person.email) == ("Test", "User", "test.user@okta.local")
    assert not person.has_usable_password()  # the password Okta sent is never a way in
    assert not Membership.objects.filter(user=person).exists()  # groups give roles, not the default project
    assert body["id"] == str(person.identity.scim_id)
    assert body["externalId"] == "00ujl29u0le5T6Aj10h7"
    assert "password" not in body
    found = scim.get("/scim/v2/Users", {"filter": 'userName eq "Test.User@okta.local"'}).json()
    assert found["totalResults"] == 1
    assert found["Resources"][0]["id"] == body["id"]
    none = scim.get("/scim/v2/Users", {"filter": 'userName eq "nobody@okta.local"'}).json()
    assert none["totalResults"] == 0
    assert none["Resources"] == []
    assert Entry.objects.filter(action="person.created", target__contains="test.user@okta.local").exists()


def test_entras_user_keeps_its_enterprise_extension_and_is_changed_by_path(scim: Client) -> None:
    body = made(scim, "entra_create_user")
    extension = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
    assert body[extension] == {"department": "Engineering"}
    changed = send(scim, "PATCH", f"/Users/{body['id']}", fixture("entra_replace_attributes"))
    assert changed.status_code == 200, changed.content
    person = User.objects.get(identity__scim_id=body["id"])
    assert person.email == "updatedEmail@microsoft.com"
    assert person.last_name == "updatedFamilyName"
    again = send(scim, "GET", f"/Users/{body['id']}").json()
    assert again[extension] == {"department": "Engineering"}
    assert again["emails"][0]["value"] == "updatedEmail@microsoft.com"


def test_deactivating_ends_tokens_claims_and_push_at_once_and_is_recorded(
    scim: Client, django_capture_on_commit_callbacks: Any
) -> None:
    body = made(scim)
    person = User.objects.get(identity__scim_id=body["id"])
    token, _ = AgentToken.issue("laptop", user=person, project=Project.default())
    question = Question.objects.create(text="Ship it?")
    question.claim(person.get_username())
    from notify.models import PushSubscription

    PushSubscription.objects.create(user=person, endpoint="https://push.example/x", p256dh="k", auth="a")
    with django_capture_on_commit_callbacks(execute=True):
        response = send(scim, "PATCH", f"/Users/{body['id']}", fixture("okta_deactivate_user"))
    assert response.status_code == 200
    assert response.json()["active"] is False
    person.refresh_from_db()
    token.refresh_from_db()
    question.refresh_from_db()
    assert not person.is_active
    assert not token.is_active
    assert question.claimed_by == ""
    assert not PushSubscription.objects.filter(user=person).exists()
    assert Entry.objects.filter(action="person.deactivated", target__contains=person.username).exists()


def test_entras_string_false_deactivates_too(scim: Client) -> None:
    body = made(scim, "entra_create_user")
    assert send(scim, "PATCH", f"/Users/{body['id']}", fixture("entra_disable_user")).status_code == 200
    assert not User.objects.get(identity__scim_id=body["id"]).is_active


def test_group_members_get_the_mapped_role_and_lose_it_when_removed_okta_style(scim: Client) -> None:
    user = made(scim)
    group = send(scim, "POST", "/Groups", fixture("okta_create_group"))
    assert group.status_code == 201, group.content
    gid = group.json()["id"]
    added = send(scim, "PATCH", f"/Groups/{gid}", fixture("okta_group_add_member", user["id"]))
    assert added.status_code == 200, added.content
    person = User.objects.get(identity__scim_id=user["id"])
    membership = Membership.objects.get(user=person, project__name="shop")
    assert (membership.role, membership.source) == (Role.ANSWERER, MembershipSource.DIRECTORY)
    assert send(scim, "GET", f"/Users/{user['id']}").json()["groups"][0]["display"] == "shop-answerers"
    removed = send(scim, "PATCH", f"/Groups/{gid}", fixture("okta_group_remove_member", user["id"]))
    assert removed.status_code == 200, removed.content
    assert not Membership.objects.filter(user=person, project__name="shop").exists()


def test_entras_member_removal_by_value_takes_the_role_away(scim: Client) -> None:
    user = made(scim, "entra_create_user")
    body = fixture("entra_create_group")
    body["displayName"] = "shop-admins"
    gid = send(scim, "POST", "/Groups", body).json()["id"]
    assert send(scim, "PATCH", f"/Groups/{gid}", fixture("entra_group_add_member", user["id"])).status_code == 200
    person = User.objects.get(identity__scim_id=user["id"])
    assert Membership.objects.get(user=person, project__name="shop").role == Role.ADMIN
    gone = send(scim, "PATCH", f"/Groups/{gid}", fixture("entra_group_remove_member", user["id"]))
    assert gone.status_code == 200, gone.content
    assert not Membership.objects.filter(user=person, project__name="shop").exists()


def test_a_role_given_by_hand_stays_when_the_group_goes(scim: Client) -> None:
    user = made(scim)
    person = User.objects.get(identity__scim_id=user["id"])
    Project.objects.get(name="shop").set_member(person, Role.VIEWER)
    gid = send(scim, "POST", "/Groups", {**fixture("okta_create_group"), "members": [{"value": user["id"]}]}).json()[
        "id"
    ]
    assert Membership.objects.get(user=person, project__name="shop").role == Role.VIEWER
    assert send(scim, "DELETE", f"/Groups/{gid}").status_code == 204
    assert Membership.objects.get(user=person, project__name="shop").role == Role.VIEWER
    assert not DirectoryGroup.objects.exists()


def test_roles_only_makes_the_directory_the_only_word(scim: Client, settings: Any) -> None:
    settings.HOOKBRIDGE_OIDC_ROLES_ONLY = True
    user = made(scim)
    person = User.objects.get(identity__scim_id=user["id"])
    Project.objects.get(name="shop").set_member(person, Role.VIEWER)
    send(scim, "POST", "/Groups", {**fixture("okta_create_group"), "members": [{"value": user["id"]}]})
    membership = Membership.objects.get(user=person, project__name="shop")
    assert (membership.role, membership.source) == (Role.ANSWERER, MembershipSource.DIRECTORY)


def test_delete_deactivates_keeps_the_history_and_a_new_create_brings_them_back(scim: Client) -> None:
    user = made(scim)
    assert send(scim, "DELETE", f"/Users/{user['id']}").status_code == 204
    assert send(scim, "GET", f"/Users/{user['id']}").status_code == 404
    person = User.objects.get(username="test.user@okta.local")
    assert not person.is_active
    again = made(scim)
    assert again["id"] != user["id"]
    person = User.objects.get(pk=person.pk)
    assert person.is_active
    assert str(person.identity.scim_id) == again["id"]


def test_a_local_accounts_username_is_not_taken_over(scim: Client) -> None:
    User.objects.create_user("test.user@okta.local", password="a-long-local-password")
    response = send(scim, "POST", "/Users", fixture("okta_create_user"))
    assert response.status_code == 409
    assert response.json()["scimType"] == "uniqueness"
    assert not Identity.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "x", "favouriteColour": "red"},
         "favouriteColour"),
        ({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "active": True}, "userName"),
        ({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "x", "active": "maybe"}, "active"),
    ],
)  # fmt: skip
def test_bad_users_are_refused_naming_the_field_and_change_nothing(scim: Client, body: Any, field: str) -> None:
    before = User.objects.count()
    response = send(scim, "POST", "/Users", body)
    assert response.status_code == 400, response.content
    assert field in response.json()["detail"]
    assert User.objects.count() == before


def test_bad_requests_get_scim_errors_never_a_500(scim: Client) -> None:
    assert send(scim, "GET", "/Users/not-a-uuid").status_code == 404
    assert send(scim, "GET", "/Users/7d4c1d9e-0000-4000-8000-000000000000").status_code == 404
    assert send(scim, "GET", "/Nope").status_code == 404
    assert send(scim, "DELETE", "/ServiceProviderConfig").status_code == 405
    bad_filter = scim.get("/scim/v2/Users", {"filter": 'userName eq "x" and'})
    assert bad_filter.status_code == 400
    assert bad_filter.json()["scimType"] == "invalidFilter"
    not_json = scim.post("/scim/v2/Users", data="{nope", content_type="application/scim+json")
    assert not_json.status_code == 400
    assert not_json.json()["scimType"] == "invalidSyntax"
    user = made(scim)
    explode = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "explode"}]}
    bad_patch = send(scim, "PATCH", f"/Users/{user['id']}", explode)
    assert bad_patch.status_code == 400
    unknown_member = send(scim, "POST", "/Groups", {**fixture("okta_create_group"), "members": [{"value": "nobody"}]})
    assert unknown_member.status_code == 400
    assert "members" in unknown_member.json()["detail"]
    assert not DirectoryGroup.objects.exists()
    assert User.objects.get(identity__scim_id=user["id"]).is_active


def test_lists_page_and_filter_beyond_the_username(scim: Client) -> None:
    made(scim)
    made(scim, "entra_create_user")
    page = scim.get("/scim/v2/Users", {"startIndex": 2, "count": 1}).json()
    assert (page["totalResults"], page["startIndex"], page["itemsPerPage"]) == (2, 2, 1)
    found = scim.get("/scim/v2/Users", {"filter": 'name.familyName eq "familyName"'}).json()
    assert found["totalResults"] == 1
    assert found["Resources"][0]["externalId"].startswith("0a21f0f2")
    trimmed = scim.get("/scim/v2/Users", {"attributes": "userName"}).json()["Resources"][0]
    assert "userName" in trimmed
    assert "emails" not in trimmed
