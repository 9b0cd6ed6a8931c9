"""Issue 53: rules suggested from what people keep allowing (the rules page, and weekly by mail), and the admin's dry
run before an edited rule or policy is saved."""

from __future__ import annotations

import io
import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.management import call_command
from django.test import Client

from approvals import suggestions
from approvals.models import ApprovalPolicy, ApprovalRule
from approvals.tests.test_policies_who_decides import Shop
from projects.models import Project, Role
from questions.models import Question

FOLDER = "/home/pat/shop"
USES = itertools.count()


@pytest.fixture
def shop(db: None) -> Shop:
    return Shop()


def decide(shop: Shop, command: str, who: str = "ann", answer: dict[str, Any] | None = None) -> Question:
    """One tool use, asked and decided: each its own (Claude Code's Bash input says why it runs the command)."""
    from hosts import service

    tool_input = {"command": command, "description": f"use {next(USES)}"}
    payload = {"tool_name": "Bash", "tool_input": tool_input, "cwd": FOLDER, "host": "claude-code"}
    question, _ = service.ask_approval(shop.agent, shop.agent.name, payload, None, f"Bash: {command}")
    question.record_answer(answer or {"behavior": "allow"}, by_user=shop.people[who])
    return question


def said(shop: Shop) -> list[str]:
    return [str(s) for s in suggestions.suggest([shop.project])]


def test_a_command_allowed_again_and_again_is_suggested_as_exactly_the_words_people_allowed(shop: Shop) -> None:
    for _ in range(4):
        decide(shop, "npm run lint")
    assert said(shop) == [], "four times is not yet a habit (at least 5)"
    decide(shop, "npm run lint", who="bob")
    assert said(shop) == [
        "ann, bob allowed `npm run lint` in /home/pat/shop 5 times in 14 days and never denied it — "
        "make it a rule for 30 days?"
    ]
    for _ in range(5):
        decide(shop, "npm run build")
        decide(shop, "'git' status -s")
    found = {s.command_prefix: s.allows for s in suggestions.suggest([shop.project])}
    assert found == {"npm run": 10, "git status -s": 5}, "what they share, in words; never more than was allowed"


@pytest.mark.parametrize(
    ("commands", "why"),
    [
        (["make deploy"] * 5 + ["make deploy!deny"], "one deny spoils it"),
        (["make deploy"] * 5 + ["make deploy!edit"], "an input allowed only as edited spoils it"),
        (["rm -rf build"] * 6, "a command that cannot be undone is never suggested"),
        (["make a && make b"] * 6, "a compound command is never one rule"),
        (["make $TARGET"] * 6, "a computed word is not a word a rule can name"),
    ],
)
def test_what_a_rule_should_not_say_is_never_suggested(shop: Shop, commands: list[str], why: str) -> None:
    for command in commands:
        text, _, how = command.partition("!")
        answers: dict[str, dict[str, Any]] = {
            "deny": {"behavior": "deny", "message": "no"},
            "edit": {"behavior": "allow", "updatedInput": {"command": "make deploy --dry-run"}},
        }
        answer = answers.get(how)
        decide(shop, text, answer=answer)
    assert said(shop) == [], why


def test_a_command_a_rule_already_decides_or_a_two_person_policy_covers_is_not_suggested(
    shop: Shop, tmp_path: Path
) -> None:
    for _ in range(5):
        decide(shop, "git push origin main")
        decide(shop, "npm test")
    assert len(said(shop)) == 2
    shop.apply(tmp_path)  # npm test becomes a rule; pushes need two people, never the author
    assert said(shop) == []


def test_the_rules_page_offers_each_suggestion_and_accept_makes_the_rule_for_its_project_s_admin_only(
    shop: Shop,
) -> None:
    for _ in range(5):
        decide(shop, "npm run lint")
    adm = shop.people["adm"]
    adm.is_staff = True
    adm.save()
    client = Client()
    client.force_login(adm)
    page = client.get("/admin/approvals/approvalrule/").content.decode()
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page))
    assert "shop: ann allowed npm run lint in /home/pat/shop 5 times in 14 days and never denied it" in words
    key = suggestions.suggest([shop.project])[0].key

    outsider = User.objects.create_user("outsider", is_staff=True)
    Project.objects.create(name="elsewhere").set_member(outsider, Role.ADMIN)
    other = Client()
    other.force_login(outsider)
    assert "npm run lint" not in other.get("/admin/approvals/approvalrule/").content.decode()
    other.post("/admin/approvals/approvalrule/suggestions/accept/", {"key": key})
    assert not ApprovalRule.objects.exists(), "another project's admin cannot make shop's rule"
    client.post("/admin/approvals/approvalrule/suggestions/accept/", {"key": key + "x"})
    assert not ApprovalRule.objects.exists(), "a key history does not suggest makes nothing"
    assert client.get("/admin/approvals/approvalrule/suggestions/accept/").status_code == 405

    accepted = client.post("/admin/approvals/approvalrule/suggestions/accept/", {"key": key}, follow=True)
    rule = ApprovalRule.objects.get()
    assert (rule.tool_pattern, rule.command_prefix, rule.folder, rule.project) == (
        "Bash", "npm run lint", FOLDER, shop.project)  # fmt: skip
    assert rule.owner == adm
    assert rule.reason.startswith("ann allowed `npm run lint` in /home/pat/shop 5 times")
    assert rule.expires_at is not None
    assert "Saved rule" in accepted.content.decode()
    assert said(shop) == [], "decided by a rule now: no longer suggested"


def test_policy_suggest_mails_each_project_s_admins_their_suggestions(shop: Shop, settings: Any) -> None:
    settings.HOOKBRIDGE_EMAIL_CONFIGURED = True
    shop.people["adm"].email = "adm@example.com"
    shop.people["adm"].save()
    for _ in range(6):
        decide(shop, "make lint")
    out = io.StringIO()
    call_command("policy", "suggest", "--mail", stdout=out)
    assert "1 rules suggested" in out.getvalue()
    assert "shop: ann allowed `make lint` in /home/pat/shop 6 times" in out.getvalue()
    assert [m.to for m in mail.outbox] == [["adm@example.com"]]
    assert "make lint" in mail.outbox[0].body
    assert "/admin/approvals/approvalrule/" in mail.outbox[0].body


def admin_of_shop(shop: Shop) -> Client:
    adm = shop.people["adm"]
    adm.is_staff = True
    adm.save()
    client = Client()
    client.force_login(adm)
    return client


def rule_form(**changes: Any) -> dict[str, Any]:
    form = {"position": "100", "action": "allow", "tool_pattern": "Bash", "command_prefix": "", "command": "",
            "path": "", "input_pattern": "", "folder": "", "message": "", "reason": "", "owner": "",
            "expires_at_0": "", "expires_at_1": "", "enabled": "on"}  # fmt: skip
    return {**form, **changes}


def test_a_new_deny_rule_is_shown_the_allows_it_would_have_denied_and_saves_only_when_confirmed(shop: Shop) -> None:
    decide(shop, "git push origin main")
    decide(shop, "npm test")
    client = admin_of_shop(shop)
    form = rule_form(action="deny", command_prefix="git push", message="PRs only", project=str(shop.project.pk))
    shown = client.post("/admin/approvals/approvalrule/add/", form)
    page = shown.content.decode()
    assert shown.status_code == 200
    assert "would decide" in page
    assert "1 of them otherwise" in page
    assert "git push origin main" in page
    assert "allowed by ann" in page
    assert "deny by rule" in page
    assert "npm test" not in page.split('id="dry-run"')[1].split("</table>")[0]
    assert not ApprovalRule.objects.exists(), "nothing is saved before the person confirms"
    client.post("/admin/approvals/approvalrule/add/", {**form, "_confirmed": "1"})
    assert ApprovalRule.objects.get().command_prefix == "git push"


def test_an_edit_that_changes_no_outcome_saves_at_once_and_says_so(shop: Shop) -> None:
    decide(shop, "npm test")
    client = admin_of_shop(shop)
    form = rule_form(command_prefix="make docs", project=str(shop.project.pk))
    saved = client.post("/admin/approvals/approvalrule/add/", form, follow=True)
    assert "Dry run: none of the latest 1 approvals would be decided otherwise." in saved.content.decode()
    assert ApprovalRule.objects.get().command_prefix == "make docs"


def test_raising_a_policy_s_quorum_lists_what_one_person_allowed_alone(shop: Shop, tmp_path: Path) -> None:
    shop.apply(tmp_path, "project: shop\napprovals:\n  - name: pushes\n    match: {command_prefix: 'git push'}\n")
    ApprovalPolicy.objects.update(source="admin")  # made in the admin: editable there
    policy = ApprovalPolicy.objects.get()
    decide(shop, "git push origin main")
    client = admin_of_shop(shop)
    form = {"project": str(shop.project.pk), "position": "10", "name": "pushes", "host": "", "tool_pattern": "",
            "command_prefix": "git push", "path": "", "destructive": "unknown", "token": "", "folder": "",
            "quorum": "2", "self_approval": "on", "deciders": "[]", "escalate": "[]", "timeout_seconds": "",
            "fallback": "deny", "created_at_0": "2026-12-01", "created_at_1": "10:00:00"}  # fmt: skip
    shown = client.post(f"/admin/approvals/approvalpolicy/{policy.pk}/change/", form).content.decode()
    assert "pushes needs 2 people to allow it" in shown
    policy.refresh_from_db()
    assert policy.quorum == 1
    refused = client.post(
        f"/admin/approvals/approvalpolicy/{policy.pk}/change/", {**form, "deciders": '["on-call:nosuch"]'}
    ).content.decode()
    assert "shop has no on-call schedule named" in refused


def test_a_rule_saved_in_the_admin_and_a_policy_file_applied_are_each_in_the_audit_record(
    shop: Shop, tmp_path: Path
) -> None:
    from audit.models import Entry

    client = admin_of_shop(shop)
    client.post(
        "/admin/approvals/approvalrule/add/", rule_form(command_prefix="make docs", project=str(shop.project.pk))
    )
    created = Entry.objects.get(action="rule.created")
    assert (created.actor, created.project) == ("adm", shop.project.name)
    assert created.details["after"]["command_prefix"] == "make docs"
    shop.apply(tmp_path, "project: shop\napprovals:\n  - name: pushes\n    match: {command_prefix: 'git push'}\n")
    applied = Entry.objects.get(action="policy.applied")
    assert applied.actor.endswith("(command line)")
    assert "+ approval policy pushes" in " ".join(applied.details["changes"])
    assert Entry.objects.filter(action="rule.deleted", target_id=str(created.target_id)).count() == 1, (
        "the file replaced the admin's rule, and the record says so"
    )
