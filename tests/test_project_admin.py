"""Issue 31: the admin lists a person's projects' rows only; a project's admin manages its members and tokens."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from projects.models import Membership
from tests.project_world import World, as_


@pytest.fixture(autouse=True)
def staff_read_records(world: World) -> None:
    """The admin and the outsider may read the records in the admin (staff with Django's view permissions)."""
    views = Permission.objects.filter(codename__in=["view_question", "view_agentsession", "view_hookrun"])
    for name in ("adm", "out"):
        world.people[name].user_permissions.add(*views)


@pytest.mark.parametrize(
    ("path", "web", "ops"),
    [
        ("/admin/questions/question/", "Deploy web?", "Deploy ops?"),
        ("/admin/lifecycle/agentsession/", "web run", "ops run"),
        ("/admin/hooks/hookrun/", "web", "ops"),
    ],
)
def test_staff_see_their_projects_rows_only(world: World, path: str, web: str, ops: str) -> None:
    mine = as_(world, "adm").get(path)
    assert mine.status_code == 200
    assert web in mine.text
    assert f">{ops}" not in mine.text
    assert ops not in mine.text.replace("ops_", "")
    everything = as_(world, "root").get(path).text
    assert web in everything
    assert ops in everything


def test_a_projects_admin_sees_and_manages_its_tokens_only(world: World) -> None:
    listing = as_(world, "adm").get("/admin/tokens/agenttoken/")
    assert listing.status_code == 200
    assert "web-agent" in listing.text
    assert "ops-agent" not in listing.text
    assert "team-bot" not in listing.text  # a token for every project is a superuser's
    other = world.tokens["ops"]
    assert as_(world, "adm").get(f"/admin/tokens/agenttoken/{other.pk}/change/").status_code in (302, 403, 404)
    # An answerer is not a token admin, even as staff.
    assert as_(world, "out").get("/admin/tokens/agenttoken/").status_code == 403


def test_a_projects_admin_adds_a_member(world: World) -> None:
    page = as_(world, "adm").get(f"/admin/projects/project/{world.web.pk}/change/")
    assert page.status_code == 200
    form = {
        "memberships-TOTAL_FORMS": "1",
        "memberships-INITIAL_FORMS": "0",
        "memberships-0-user": str(world.people["out"].pk),
        "memberships-0-role": "viewer",
    }
    response = as_(world, "adm").post(f"/admin/projects/project/{world.web.pk}/change/", form)
    assert response.status_code == 302, response.content[:2000]
    assert Membership.objects.get(project=world.web, user=world.people["out"]).role == "viewer"


def test_a_member_who_is_not_its_admin_may_not_change_a_project(world: World) -> None:
    response = as_(world, "out").get(f"/admin/projects/project/{world.ops.pk}/change/")
    assert response.status_code == 200
    assert "memberships-TOTAL_FORMS" not in response.text
    assert as_(world, "out").get(f"/admin/projects/project/{world.web.pk}/change/").status_code in (302, 403, 404)
