"""Issue 31: the admin lists a person's projects' rows only; a project's admin manages its members and tokens."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from approvals.models import ApprovalRule
from lifecycle.models import AgentSession
from projects.models import Membership, Role
from questions.models import Question
from testing.project_world import World, as_


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


def admin_here_viewer_there(world: World) -> None:
    """Issue 37's case: adm is ops's admin and only a viewer of web."""
    world.web.set_member(world.people["adm"], Role.VIEWER)
    world.ops.set_member(world.people["adm"], Role.ADMIN)


def test_a_viewer_somewhere_sees_the_rule_list_read_only_and_an_inline_edit_changes_nothing(world: World) -> None:
    admin_here_viewer_there(world)
    web_rule = ApprovalRule.objects.create(tool_pattern="Bash", input_pattern="^rm", action="deny", project=world.web)
    page = as_(world, "adm")
    listing = page.get("/admin/approvals/approvalrule/")
    assert listing.status_code == 200
    assert "Bash" in listing.text
    assert 'name="form-0-enabled"' not in listing.text, "no inline edit boxes on a list with a project only viewed"
    # The edit posted anyway, as the list would have sent it: refused, nothing changed.
    form = {
        "form-TOTAL_FORMS": "1", "form-INITIAL_FORMS": "1", "form-MIN_NUM_FORMS": "0", "form-MAX_NUM_FORMS": "1000",
        "form-0-id": str(web_rule.pk), "form-0-position": "99", "_save": "Save",
    }  # fmt: skip
    page.post("/admin/approvals/approvalrule/", form)
    stored = ApprovalRule.objects.get(pk=web_rule.pk)
    assert (stored.enabled, stored.position) == (True, web_rule.position)


def test_a_viewer_somewhere_cannot_delete_its_rules_with_the_list_action(world: World) -> None:
    admin_here_viewer_there(world)
    web_rule = ApprovalRule.objects.create(tool_pattern="Bash", action="deny", project=world.web)
    ops_rule = ApprovalRule.objects.create(tool_pattern="Edit", action="deny", project=world.ops)
    page = as_(world, "adm")
    page.post(
        "/admin/approvals/approvalrule/",
        {"action": "delete_selected", "_selected_action": [web_rule.pk, ops_rule.pk], "post": "yes"},
    )
    assert ApprovalRule.objects.filter(pk=web_rule.pk).exists()
    assert not ApprovalRule.objects.filter(pk=ops_rule.pk).exists()


def test_the_question_lists_filters_name_only_values_of_the_persons_projects(world: World) -> None:
    world.questions["ops"].record_answer(option="yes", by_name="olga-from-ops")
    AgentSession.objects.filter(pk=world.sessions["ops"].pk).update(project_name="secret-ops-folder")
    Question.objects.filter(pk=world.questions["ops"].pk).update(session=world.sessions["ops"])
    listing = as_(world, "adm").get("/admin/questions/question/").text
    assert "olga-from-ops" not in listing
    assert "secret-ops-folder" not in listing
    assert "ops run" not in listing
    everything = as_(world, "root").get("/admin/questions/question/").text
    assert "olga-from-ops" in everything
    assert "secret-ops-folder" in everything
