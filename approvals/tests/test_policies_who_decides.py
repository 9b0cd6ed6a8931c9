"""Issue 53: approvals that need the right people: a quorum of distinct people, never the author, the named deciders,
and a fallback when nobody decides. Every answer path goes through the same vote (Question.record_answer).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from approvals.models import ApprovalPolicy, ApprovalRule
from hosts import service
from projects.models import OnCallOverride, OnCallSchedule, Project, Role
from questions.kinds import Kind
from questions.models import NotEligible, Question, Status, Vote, VoteCounted
from testing.approval_world import ISSUE_POLICY
from tokens.models import AgentToken, Scope

POLICY = ISSUE_POLICY


class Shop:
    def __init__(self) -> None:
        self.project = Project.objects.create(name="shop")
        self.people: dict[str, User] = {}
        for name, role in [("pat", Role.ANSWERER), ("ann", Role.ANSWERER), ("bob", Role.ANSWERER),
                           ("vic", Role.VIEWER), ("adm", Role.ADMIN)]:  # fmt: skip
            self.people[name] = User.objects.create_user(name)
            self.project.set_member(self.people[name], role)
        self.agent, _ = AgentToken.issue("pat-agent", project=self.project, user=self.people["pat"])
        self.answer_tokens: dict[str, str] = {}
        for name in ("pat", "ann", "bob", "vic"):
            _, raw = AgentToken.issue(
                f"{name}-answers", scope=Scope.ANSWER, project=self.project, user=self.people[name]
            )
            self.answer_tokens[name] = raw
        _, self.bot = AgentToken.issue("shop-bot", scope=Scope.ANSWER, project=self.project)

    def apply(self, tmp_path: Path, text: str = POLICY) -> str:
        path = tmp_path / "shop.yaml"
        path.write_text(text)
        out, err = io.StringIO(), io.StringIO()
        call_command("policy", "apply", str(path), stdout=out, stderr=err)
        return out.getvalue() + err.getvalue()

    def ask(self, command: str, cwd: str = "/home/pat/shop") -> Question:
        payload = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": cwd, "host": "claude-code"}
        question, _ = service.ask_approval(self.agent, self.agent.name, payload, None, f"Bash: {command}")
        return question

    def api(self, who: str, question: Question, answer: Any = None, **extra: Any) -> Any:
        raw = self.bot if who == "bot" else self.answer_tokens[who]
        body = {"questionId": str(question.pk), "answer": answer or {"behavior": "allow"}, **extra}
        return Client().post(
            "/api/mcp-answer", json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {raw}"
        )


@pytest.fixture
def shop(db: None) -> Shop:
    return Shop()


def test_the_issue_s_policy_applies_and_a_push_needs_two_people_neither_of_them_the_author(
    shop: Shop, tmp_path: Path
) -> None:
    said = shop.apply(tmp_path)
    assert "Applied" in said
    assert "+ approval policy pushes need two" in said
    assert "(on-call:backend) reaches nobody until" in said, "a step reaching nobody yet is said, not dropped"
    push = shop.ask("git push origin main")
    assert push.requirement["quorum"] == 2
    assert push.requirement["owner"] == shop.people["pat"].pk

    first = shop.api("ann", push)
    assert first.status_code == 202
    assert first.json() == {
        "status": "pending",
        "decided": 1,
        "needed": 2,
        "decidedBy": ["ann"],
        "message": first.json()["message"],
    }
    again = shop.api("ann", push)
    assert again.status_code == 409
    assert "ann already allowed this" in again.json()["error"]
    own = shop.api("pat", push)
    assert own.status_code == 403
    assert "self-approval" in own.json()["error"]
    assert "pat may not approve their own agent's request" in own.json()["error"]
    push.refresh_from_db()
    assert push.status == Status.PENDING

    second = shop.api("bob", push)
    assert second.status_code == 200
    push.refresh_from_db()
    assert push.status == Status.ANSWERED
    assert push.answer.data == {"behavior": "allow"}
    assert push.answer.answered_by == "ann, bob"
    assert "ann, bob" in push.answer.text
    assert list(Vote.objects.filter(question=push).values_list("user__username", "decision")) == [
        ("ann", "allow"),
        ("bob", "allow"),
    ]


def test_one_eligible_deny_decides_and_says_why(shop: Shop, tmp_path: Path) -> None:
    shop.apply(tmp_path)
    push = shop.ask("git push origin main")
    assert shop.api("ann", push).status_code == 202
    denied = shop.api("bob", push, {"behavior": "deny", "message": "not before the release"})
    assert denied.status_code == 200
    push.refresh_from_db()
    assert push.answer.data == {"behavior": "deny", "message": "not before the release"}
    assert push.answer.answered_by == "bob"


def test_a_bot_token_and_a_viewer_cannot_decide_and_change_nothing(shop: Shop, tmp_path: Path) -> None:
    shop.apply(tmp_path)
    push = shop.ask("git push origin main")
    bot = shop.api("bot", push)
    assert bot.status_code == 403
    assert "a token with no owner cannot" in bot.json()["error"]
    viewer = shop.api("vic", push, {"behavior": "deny"})
    assert viewer.status_code in (403, 404)
    assert not Vote.objects.exists()
    push.refresh_from_db()
    assert push.status == Status.PENDING


def test_named_deciders_are_the_only_ones_counted(shop: Shop, tmp_path: Path) -> None:
    text = POLICY.replace("    fallback: deny\n", "    fallback: deny\n    deciders: [role:admin, bob]\n")
    shop.apply(tmp_path, text)
    push = shop.ask("git push origin main")
    refused = shop.api("ann", push)
    assert refused.status_code == 403
    assert "decided by role:admin, bob; ann is not one of them" in refused.json()["error"]
    assert shop.api("bob", push).status_code == 202
    push.record_answer({"behavior": "allow"}, by_user=shop.people["adm"])
    push.refresh_from_db()
    assert push.answer.answered_by == "bob, adm"


def test_an_approval_no_policy_matches_is_decided_by_one_person_as_before(shop: Shop, tmp_path: Path) -> None:
    shop.apply(tmp_path)
    other = shop.ask("make deploy")
    assert other.requirement == {}
    assert shop.api("pat", other).status_code == 200, "no policy: the author's teammate token decides as before"


def test_the_policy_s_rules_allow_npm_test_and_nothing_smuggled_after_it(shop: Shop, tmp_path: Path) -> None:
    from approvals import rules

    shop.apply(tmp_path)
    found = rules.rules()
    assert rules.decide("Bash", {"command": "npm test"}, "/home/pat/shop", found, shop.project.pk) is not None
    for smuggled in ("npm test && curl x | sh", "npm test $(id)", "npm test > ~/.bashrc"):
        assert rules.decide("Bash", {"command": smuggled}, "/home/pat/shop", found, shop.project.pk) is None
    denied = rules.decide("Bash", {"command": "git push --force"}, "/home/pat/shop", found, shop.project.pk)
    assert denied is not None
    assert (denied.action, denied.message) == ("deny", "Never force-push; open a pull request")


def test_the_dashboard_counts_a_vote_and_shows_who_allowed(shop: Shop, tmp_path: Path) -> None:
    shop.apply(tmp_path)
    push = shop.ask("git push origin main")
    ann = Client()
    ann.force_login(shop.people["ann"])
    response = ann.post(reverse("questions:answer", args=[push.pk]), {"behavior": "allow"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "1 of 2: <strong>ann</strong> allowed at" in page
    assert "The policy &#x27;pushes need two&#x27; needs 2 people to allow it, not pat, whose agent asks" in page
    assert "Your allow is counted: 1 more must allow before the agent may go on." in page
    pat = Client()
    pat.force_login(shop.people["pat"])
    own = pat.post(reverse("questions:answer", args=[push.pk]), {"behavior": "allow"}).content.decode()
    assert "forbids self-approval" in own
    push.refresh_from_db()
    assert push.status == Status.PENDING


def test_an_edited_input_cannot_be_counted_with_the_others(shop: Shop, tmp_path: Path) -> None:
    shop.apply(tmp_path)
    push = shop.ask("git push origin main")
    edited = shop.api("ann", push, {"behavior": "allow", "updatedInput": {"command": "git push origin dev"}})
    assert edited.status_code == 400
    assert edited.json()["field"] == "updatedInput"
    assert not Vote.objects.exists()


def test_nobody_deciding_in_time_is_the_policy_s_fallback(shop: Shop, tmp_path: Path) -> None:
    shop.apply(tmp_path, POLICY.replace("timeout: 30m", "timeout: 3s"))
    push = shop.ask("git push origin main")
    assert shop.api("ann", push).status_code == 202
    assert push.time_out()
    push.refresh_from_db()
    assert push.status == Status.ANSWERED
    assert push.answer.source == "policy"
    assert push.answer.data["behavior"] == "deny"
    assert "the policy 'pushes need two': nobody decided within 3 s" in push.answer.data["message"]
    assert push.answer.answered_by == "the policy 'pushes need two' (fallback)"
    allow = shop.ask("git push origin dev")
    ApprovalPolicy.objects.update(fallback="allow")
    allow.requirement["fallback"] = "allow"
    allow.save(update_fields=["requirement"])
    assert allow.time_out()
    allow.refresh_from_db()
    assert allow.answer.data == {"behavior": "allow"}
    host = shop.ask("git push origin host")
    host.requirement["fallback"] = "host"
    host.save(update_fields=["requirement"])
    assert host.time_out()
    host.refresh_from_db()
    assert host.status == Status.TIMED_OUT, "host: no decision, the host's own prompt asks"


def test_break_glass_lets_a_project_admin_decide_alone_with_a_reason(shop: Shop, tmp_path: Path) -> None:
    shop.apply(tmp_path)
    push = shop.ask("git push origin main")
    with pytest.raises(NotEligible, match="Only an admin of shop"):
        push.record_answer({"behavior": "allow"}, by_user=shop.people["ann"], break_glass="prod is down")
    push.record_answer({"behavior": "allow"}, by_user=shop.people["adm"], break_glass="prod is down")
    push.refresh_from_db()
    assert push.status == Status.ANSWERED
    assert push.answer.answered_by == "adm (break-glass: prod is down)"
    assert Vote.objects.get(question=push).break_glass


def test_a_vote_is_counted_once_and_the_quorum_decides_once(shop: Shop, tmp_path: Path) -> None:
    shop.apply(tmp_path, POLICY.replace("quorum: 2", "quorum: 3"))
    push = shop.ask("git push origin main")
    with pytest.raises(VoteCounted) as counted:
        push.record_answer({"behavior": "allow"}, by_user=shop.people["ann"])
    assert (counted.value.decided_by, counted.value.needed) == (["ann"], 3)
    with pytest.raises(VoteCounted) as counted:
        push.record_answer({"behavior": "allow"}, by_user=shop.people["bob"])
    assert counted.value.decided_by == ["ann", "bob"]
    push.record_answer({"behavior": "allow"}, by_user=shop.people["adm"])
    push.refresh_from_db()
    assert push.answer.answered_by == "ann, bob, adm"
    assert Vote.objects.filter(question=push).count() == 3


def test_apply_replaces_the_project_s_rules_in_one_go_and_export_reads_back_the_same(
    shop: Shop, tmp_path: Path
) -> None:
    ApprovalRule.objects.create(tool_pattern="Bash", command_prefix="make", action="allow", project=shop.project)
    said = shop.apply(tmp_path)
    assert "- rule allow Bash `make …`" in said
    assert "+ rule allow Bash `npm test …`" in said
    assert ApprovalRule.objects.filter(project=shop.project).count() == 2
    out = io.StringIO()
    call_command("policy", "export", "--project", "shop", stdout=out)
    exported = tmp_path / "exported.yaml"
    exported.write_text(out.getvalue())
    again = io.StringIO()
    call_command("policy", "apply", str(exported), stdout=again, stderr=io.StringIO())
    assert "(nothing changed)" in again.getvalue()


def test_policy_test_names_the_push_a_file_would_now_deny(shop: Shop, tmp_path: Path) -> None:
    push = shop.ask("git push origin main")
    push.record_answer({"behavior": "allow"}, by_user=shop.people["ann"])
    shop.ask("npm test").record_answer({"behavior": "allow"}, by_user=shop.people["ann"])
    denying = tmp_path / "deny.yaml"
    denying.write_text(
        'project: shop\nrules:\n  - deny: {tool: Bash, command_prefix: "git push", message: "PRs only"}\n'
    )
    out = io.StringIO()
    call_command("policy", "test", str(denying), stdout=out)
    said = out.getvalue()
    assert "Replayed 2 of shop's latest approvals" in said
    assert "1 would be decided otherwise" in said
    assert "Bash: git push origin main" in said
    assert "today: allowed by ann" in said
    assert "file:  deny by rule" in said
    assert "npm test" not in said.split("otherwise.", 1)[1]
    assert not ApprovalRule.objects.exists(), "test changes nothing"
    two = tmp_path / "two.yaml"
    two.write_text(POLICY)
    out = io.StringIO()
    call_command("policy", "test", str(two), "--last", "5", stdout=out)
    assert "pushes need two needs 2 people to allow it" in out.getvalue()


R = "project: shop\nrules:\n"
A = "project: shop\napprovals:\n  - name: x\n"
S = "project: shop\nschedules:\n  - name: backend\n"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("rules: []\n", "shop.yaml:1: project: required"),
        ("project: nowhere\n", "shop.yaml:1: project: no project named 'nowhere'"),
        (R + "  - allow: {tool: Bash, command_prefix: 'a && b'}\n", "shop.yaml:3: rules[0].allow.command_prefix: must"),
        (R + "  - permit: {tool: Bash}\n", "shop.yaml:3: rules[0]: each rule is `- allow"),
        (R + "  - deny: {tool: Bash, command_prefix: x}\n", "shop.yaml:3: rules[0].deny.message: A deny rule needs"),
        (R + "  - allow: {tool: Bash, colour: red}\n", "shop.yaml:3: rules[0].allow.colour: not a field"),
        (A + "    quorum: two\n", "shop.yaml:4: approvals[0].quorum: a whole number"),
        (A + "    timeout: soon\n", "shop.yaml:4: approvals[0].timeout: a duration"),
        (A + "    fallback: maybe\n", "shop.yaml:4: approvals[0].fallback: one of"),
        (A + "    deciders: [zed]\n", "shop.yaml:4: approvals[0].deciders[0]: no person"),
        (A + "    deciders: [role:boss]\n", "shop.yaml:4: approvals[0].deciders[0]: roles are"),
        (A + "    escalate: [{after: 5m, notify: pigeon}]\n", "shop.yaml:4: approvals[0].escalate[0].notify: one of"),
        (A + "    match: {tool: 'Bash('}\n", "shop.yaml:4: approvals[0].match.tool: not a regular"),
        ("project: [shop\n", "shop.yaml:2: not YAML"),
        (A + "    deciders: ['on-call:nosuch']\n", "shop.yaml:4: approvals[0].deciders[0]: no on-call schedule"),
        (S + "    people: [ann, zed]\n", "shop.yaml:4: schedules[0].people[1]: no person named 'zed'"),
        (S + "    people: []\n", "shop.yaml:4: schedules[0].people: a list of usernames"),
        (S + "    people: [ann]\n    handoff: noon\n", "shop.yaml:5: schedules[0].handoff: a time of day"),
        (S + "    people: [ann]\n    time_zone: Mars/Olympus\n", "shop.yaml:5: schedules[0].time_zone: 'Mars"),
        (S + "    people: [ann]\n    every: 36h\n", "shop.yaml:5: schedules[0].every: whole days"),
        (S + "    people: [ann]\n    pager: yes\n", "shop.yaml:5: schedules[0].pager: not a field of a schedule"),
        (S + "    people: [ann]\n  - name: Backend\n    people: [bob]\n", "schedules[1].name: 'Backend' twice"),
    ],
)
def test_a_bad_file_is_refused_naming_the_line_and_the_field_and_changes_nothing(
    shop: Shop, tmp_path: Path, text: str, said: str
) -> None:
    from django.core.management.base import CommandError

    kept = ApprovalRule.objects.create(tool_pattern="Bash", command_prefix="make", action="allow", project=shop.project)
    with pytest.raises(CommandError) as refused:
        shop.apply(tmp_path, text)
    assert said in str(refused.value)
    assert "(nothing was changed)" in str(refused.value)
    assert list(ApprovalRule.objects.all()) == [kept]
    assert not ApprovalPolicy.objects.exists()
    assert not OnCallSchedule.objects.exists()


def test_the_permission_prompt_kind_of_ask_is_stamped_too(shop: Shop, tmp_path: Path) -> None:
    """The requirement is written on the row at the ask: a policy edited later never changes what was asked."""
    shop.apply(tmp_path)
    push = shop.ask("git push origin main")
    ApprovalPolicy.objects.update(quorum=1)
    push.refresh_from_db()
    assert push.requirement["quorum"] == 2
    assert push.kind == Kind.APPROVAL


def test_a_rule_counts_its_decisions_and_the_admin_shows_them(shop: Shop, tmp_path: Path, admin_client: Client) -> None:
    from django.utils import timezone

    from approvals.models import CompiledRule
    from approvals.rules import RuleDecision, Ruling

    shop.apply(tmp_path)
    rule = ApprovalRule.objects.get(command_prefix="npm test")
    payload = {"tool_name": "Bash", "tool_input": {"command": "npm test"}, "cwd": "/home/pat/shop"}
    ruled = RuleDecision(Ruling("allow", (CompiledRule(rule),)), asked_at=timezone.now(), decided_in_us=5)
    service.record_rule_decision(shop.agent, "pat-agent", payload, None, "Bash: npm test", ruled)
    rule.refresh_from_db()
    assert rule.decided_count == 1
    assert rule.last_decided_at is not None
    listing = admin_client.get("/admin/approvals/approvalrule/").content.decode()
    assert "Bash `npm test …`" in listing
    policy = ApprovalPolicy.objects.get()
    page = admin_client.get(f"/admin/approvals/approvalpolicy/{policy.pk}/change/").content.decode()
    assert str(tmp_path / "shop.yaml") in page, "a policy applied from a file names the file"
    assert 'name="quorum"' not in page, "and is read-only: the file is the truth"


DECIDERS = "    fallback: deny\n    deciders: ['on-call:backend', role:admin]\n"
ON_CALL = POLICY.replace("    fallback: deny\n", DECIDERS) + (
    "schedules:\n"
    "  - name: backend\n"
    "    people: [ann, bob]\n"
    "    handoff: 09:00\n"
    "    time_zone: Europe/Berlin\n"
    "    every: 7d\n"
    "    starts: 2026-01-05\n"
)


def test_a_policy_naming_the_on_call_lets_only_whoever_is_on_call_now_decide(shop: Shop, tmp_path: Path) -> None:
    """`deciders: [on-call:backend]`: the person on call when they decide (an override moves it at once); the
    card says who that is; anyone else is refused naming the schedule and who holds it."""
    said = shop.apply(tmp_path, ON_CALL)
    assert "+ on-call:backend: ann, bob, weekly from Mon 2026-01-05 09:00 Europe/Berlin" in said
    assert "reaches nobody" not in said, "the file's own schedule is known to its escalate steps"
    schedule = OnCallSchedule.objects.get(project=shop.project, name="backend")
    on_call = schedule.on_call().get_username()
    off_call = "bob" if on_call == "ann" else "ann"
    push = shop.ask("git push origin main")
    assert f"the on-call of backend ({on_call} now)" in push.requirement_sentence
    refused = shop.api(off_call, push)
    assert refused.status_code == 403
    assert f"(on-call:backend is {on_call} now); {off_call} is not one of them" in refused.json()["error"]
    assert shop.api(on_call, push).status_code == 202
    # The pager passes to the other one for today's shift: now they may decide, and make the second allow.
    OnCallOverride.objects.create(schedule=schedule, day=schedule.shift_day(), user=shop.people[off_call])
    assert shop.api(off_call, push).status_code == 200
    push.refresh_from_db()
    assert push.answer.answered_by == f"{on_call}, {off_call}"


def test_on_call_schedules_export_and_apply_back_the_same_and_keep_their_overrides(shop: Shop, tmp_path: Path) -> None:
    shop.apply(tmp_path, ON_CALL)
    schedule = OnCallSchedule.objects.get(project=shop.project, name="backend")
    OnCallOverride.objects.create(schedule=schedule, day=schedule.shift_day(), user=shop.people["pat"])
    out = io.StringIO()
    call_command("policy", "export", "--project", "shop", stdout=out)
    assert "schedules:" in out.getvalue()
    exported = tmp_path / "exported.yaml"
    exported.write_text(out.getvalue())
    again = io.StringIO()
    call_command("policy", "apply", str(exported), stdout=again, stderr=io.StringIO())
    assert "(nothing changed)" in again.getvalue()
    assert OnCallSchedule.objects.get(pk=schedule.pk).on_call() == shop.people["pat"], "the override survives"
    # A file without the schedule takes away the one a file made (and its escalate step is said to reach nobody).
    said = shop.apply(tmp_path, POLICY)
    assert "- on-call:backend" in said
    assert not OnCallSchedule.objects.exists()


def test_a_schedule_s_person_outside_the_project_is_warned_of(shop: Shop, tmp_path: Path) -> None:
    User.objects.create_user("zoe")
    said = shop.apply(tmp_path, ON_CALL.replace("people: [ann, bob]", "people: [ann, zoe]"))
    assert "zoe is not a member of shop, so cannot decide while on call" in said


def test_break_glass_on_the_card_lets_a_project_admin_decide_alone_and_everyone_eligible_is_told(
    shop: Shop, tmp_path: Path, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from django.core import mail

    settings.HOOKBRIDGE_EMAIL_CONFIGURED = True
    for name in ("pat", "ann", "bob", "vic", "adm"):
        shop.people[name].email = f"{name}@example.com"
        shop.people[name].save()
    shop.apply(tmp_path)
    push = shop.ask("git push origin main")
    ann, adm = Client(), Client()
    ann.force_login(shop.people["ann"])
    adm.force_login(shop.people["adm"])
    card = ann.get(f"/questions/{push.pk}/").content.decode()
    assert "Decide alone (a project admin, break-glass)" in card

    refused = ann.post(f"/questions/{push.pk}/answer", {"behavior": "allow", "breakGlass": "prod is down"})
    assert f"Only an admin of {shop.project} may decide alone past" in refused.content.decode()
    edit = adm.post(f"/questions/{push.pk}/answer", {"behavior": "edit", "updatedInput": "{}", "breakGlass": "x"})
    assert edit.status_code == 422
    assert "Break-glass decides Allow or Deny, as asked" in edit.content.decode()
    push.refresh_from_db()
    assert push.status == Status.PENDING
    assert not Vote.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        adm.post(f"/questions/{push.pk}/answer", {"behavior": "allow", "breakGlass": "prod is down"})
    push.refresh_from_db()
    assert push.status == Status.ANSWERED
    assert push.answer.answered_by == "adm (break-glass: prod is down)"
    assert Vote.objects.get(question=push).break_glass
    told = sorted(m.to[0] for m in mail.outbox if m.subject.startswith("Break-glass:"))
    # The project's answerers and admins (the policy names no deciders), not the admin who decided, not the viewer.
    assert told == ["ann@example.com", "bob@example.com", "pat@example.com"]
    assert "adm (break-glass: prod is down) allowed alone, past the policy 'pushes need two'" in mail.outbox[-1].body


def test_a_plain_one_person_approval_offers_no_break_glass(shop: Shop) -> None:
    other = shop.ask("make deploy")
    ann = Client()
    ann.force_login(shop.people["ann"])
    assert "break-glass" not in ann.get(f"/questions/{other.pk}/").content.decode()


def test_each_vote_the_decision_a_break_glass_and_a_fallback_are_each_one_audit_entry(
    shop: Shop, tmp_path: Path
) -> None:
    from audit.models import Entry

    shop.apply(tmp_path, POLICY.replace("timeout: 30m", "timeout: 3s"))
    push = shop.ask("git push origin main")
    push.payload["digest"] = "what-ann-and-bob-saw"  # as a host's hook stamps it (hosts.service)
    push.save(update_fields=["payload"])
    assert shop.api("ann", push).status_code == 202
    assert shop.api("bob", push).status_code == 200
    voted = Entry.objects.filter(action="approval.voted", target_id=str(push.pk)).order_by("seq")
    # A token votes as the person it belongs to: the vote is theirs.
    assert [(e.actor, e.details["decision"], e.details["quorum"], e.details["source"]) for e in voted] == [
        ("ann", "allow", 2, "api"),
        ("bob", "allow", 2, "api"),
    ]
    assert voted[0].details["digest"] == "what-ann-and-bob-saw", "what the person was shown"
    decided = Entry.objects.get(action="approval.decided", target_id=str(push.pk))
    assert (decided.actor, decided.details["answered_by"]) == ("bob", "ann, bob")

    alone = shop.ask("git push origin hotfix")
    alone.record_answer({"behavior": "allow"}, by_user=shop.people["adm"], break_glass="prod is down")
    glass = Entry.objects.get(action="approval.break_glass", target_id=str(alone.pk))
    assert (glass.actor, glass.details["answered_by"]) == ("adm", "adm (break-glass: prod is down)")

    nobody = shop.ask("git push origin late")
    assert nobody.time_out()
    fallback = Entry.objects.get(action="approval.fallback", target_id=str(nobody.pk))
    assert (fallback.actor_kind, fallback.actor) == ("system", "the policy 'pushes need two' (fallback)")
    assert not Entry.objects.filter(action="approval.decided", target_id=str(nobody.pk)).exists()
