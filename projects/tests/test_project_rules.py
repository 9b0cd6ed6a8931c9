"""Issue 31: a team rule or a notify policy may be one project's, and that project's admins keep it."""

from __future__ import annotations

from typing import Any

from approvals.models import ApprovalRule, CompiledRule
from approvals.rules import decide
from lifecycle.models import AgentSession
from notify.models import NotifyPolicy
from notify.scheduling import steps_for
from questions.models import Question
from testing.project_world import World, as_


def test_a_projects_rule_decides_for_its_projects_agents_only(world: World) -> None:
    rule = [CompiledRule(ApprovalRule.objects.create(tool_pattern="Bash", action="allow", project=world.web))]
    ls = {"command": "ls"}
    assert decide("Bash", ls, "/anywhere", rule, world.web.pk) is not None
    assert decide("Bash", ls, "/anywhere", rule, world.ops.pk) is None
    # A token for every project: the folder's name says which project the agent works in.
    assert decide("Bash", ls, "/home/dev/web", rule, None) is not None
    assert decide("Bash", ls, "/home/dev/ops", rule, None) is None
    everyone = [CompiledRule(ApprovalRule.objects.create(tool_pattern="Bash", action="allow"))]
    assert decide("Bash", ls, "/x", everyone, world.ops.pk) is not None


def test_a_projects_admin_keeps_its_rules_and_no_others(world: World) -> None:
    ours = ApprovalRule.objects.create(
        tool_pattern="Bash", input_pattern="^make web$", action="allow", project=world.web
    )
    theirs = ApprovalRule.objects.create(
        tool_pattern="Bash", input_pattern="^make ops$", action="allow", project=world.ops
    )
    everyones = ApprovalRule.objects.create(tool_pattern="Bash", input_pattern="^make all$", action="allow")
    admin = as_(world, "adm")
    listing = admin.get("/admin/approvals/approvalrule/")
    assert listing.status_code == 200
    assert "^make web$" in listing.text
    assert "^make ops$" not in listing.text
    assert "^make all$" not in listing.text
    for other in (theirs, everyones):
        assert admin.get(f"/admin/approvals/approvalrule/{other.pk}/change/").status_code in (302, 403, 404)
    added = admin.post(
        "/admin/approvals/approvalrule/add/",
        {"position": "5", "tool_pattern": "Edit", "input_pattern": "", "project": str(world.ops.pk), "folder": "",
         "action": "allow", "message": "", "enabled": "on"},
    )  # fmt: skip
    assert added.status_code == 200  # the form refuses a project that is not theirs
    assert "Select a valid choice" in added.text
    assert not ApprovalRule.objects.filter(tool_pattern="Edit").exists()
    added = admin.post(
        "/admin/approvals/approvalrule/add/",
        {"position": "5", "tool_pattern": "Edit", "input_pattern": "", "project": str(world.web.pk), "folder": "",
         "action": "allow", "message": "", "enabled": "on"},
    )  # fmt: skip
    assert added.status_code == 302
    assert ApprovalRule.objects.get(tool_pattern="Edit").project == world.web
    # An answerer keeps no rules.
    assert as_(world, "out").get("/admin/approvals/approvalrule/").status_code == 403
    assert ours.pk


def test_a_projects_policy_escalates_its_questions_and_no_others(world: World, settings: Any) -> None:
    settings.HOOKBRIDGE_NOTIFY = ""
    settings.HOOKBRIDGE_WEBHOOK_URL = ""
    settings.HOOKBRIDGE_EMAIL_CONFIGURED = True
    settings.HOOKBRIDGE_EMAIL_TO = ["team@example.com"]
    NotifyPolicy.objects.create(project=world.web, steps="email@5m", email_to="web@example.com")
    web = Question.objects.get(pk=world.questions["web"].pk)
    assert [(step.channel, target) for step, target in steps_for(web)] == [("email", "web@example.com")]
    ops = Question.objects.get(pk=world.questions["ops"].pk)
    assert steps_for(ops) == []


def test_a_session_label_naming_another_projects_policy_routes_nothing(world: World, settings: Any) -> None:
    """Issue 37, hole 1: ops's agent called its session "web"; web's policy (and its address) never hears of it."""
    settings.HOOKBRIDGE_NOTIFY = "email@0s"
    settings.HOOKBRIDGE_WEBHOOK_URL = ""
    settings.HOOKBRIDGE_EMAIL_CONFIGURED = True
    settings.HOOKBRIDGE_EMAIL_TO = ["team@example.com"]
    NotifyPolicy.objects.create(project=world.web, steps="email@0s", email_to="web-admins-choice@example.com")
    session = AgentSession.open(token=world.tokens["ops"], name="sneaky", project="web")
    asked = Question.ask(
        asker=world.tokens["ops"], asker_name="ops-agent", text="Run rm -rf?", options=[], session=session
    )[0]
    assert asked.project_id == world.ops.pk, "the question is its token's project's, whatever the label says"
    assert [target for _, target in steps_for(asked)] == ["team@example.com"]


def test_a_disabled_policy_escalates_nothing_of_its_own(world: World, settings: Any) -> None:
    settings.HOOKBRIDGE_NOTIFY = "email@1m"
    settings.HOOKBRIDGE_WEBHOOK_URL = ""
    settings.HOOKBRIDGE_EMAIL_CONFIGURED = True
    settings.HOOKBRIDGE_EMAIL_TO = ["team@example.com"]
    NotifyPolicy.objects.create(project=world.web, steps="email@0s", email_to="web@example.com", enabled=False)
    web = Question.objects.get(pk=world.questions["web"].pk)
    assert [(step.delay_seconds, target) for step, target in steps_for(web)] == [(60, "team@example.com")]


def test_a_projects_admin_keeps_its_policy_and_no_others(world: World) -> None:
    NotifyPolicy.objects.create(project=world.web, steps="email@5m")
    NotifyPolicy.objects.create(project=world.ops, steps="email@1m")
    admin = as_(world, "adm")
    listing = admin.get("/admin/notify/notifypolicy/")
    assert listing.status_code == 200
    assert "email@5m" in listing.text
    assert "email@1m" not in listing.text
    response = admin.post(
        "/admin/notify/notifypolicy/add/",
        {"project": world.ops.pk, "steps": "email@0s", "slack_channel": "", "email_to": "", "enabled": "on"},
    )
    assert response.status_code == 200
    assert "Select a valid choice" in response.text
    assert NotifyPolicy.objects.get(project=world.ops).steps == "email@1m"
    assert as_(world, "vic").get("/admin/notify/notifypolicy/").status_code in (302, 403)


def test_an_enabled_policy_needs_a_project(world: World) -> None:
    root = as_(world, "root")
    response = root.post(
        "/admin/notify/notifypolicy/add/",
        {"project": "", "steps": "email@0s", "slack_channel": "", "email_to": "", "enabled": "on"},
    )
    assert response.status_code == 200
    assert "An enabled policy belongs to a project" in response.text
    assert not NotifyPolicy.objects.exists()
