from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from approvals.models import ApprovalRule, CompiledRule
from approvals.rules import RuleDecision, Ruling
from hosts import service
from lifecycle.models import AgentSession, LifecycleEvent
from questions.models import Question
from tokens.models import AgentToken


@pytest.fixture
def admin_client(client: Client, db: None) -> Client:
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-root-12345"))
    return client


@pytest.fixture
def history(db: None) -> Question:
    token, _ = AgentToken.issue("agent-a")
    question = Question.ask(asker=token, asker_name="agent-a", text="Which region?", options=[])[0]
    question.record_answer("eu-west-1", by_token=token)
    LifecycleEvent.record(asker=token, asker_name="agent-a", event_type="plan-started", phase_name="Plan")
    AgentSession.open(token=token, name="Run", project="web").record("progress", percent=5)
    return question


@pytest.mark.parametrize(
    "path",
    [
        "/admin/questions/question/",
        "/admin/questions/question/?status__exact=answered&asker_name=agent-a",
        "/admin/questions/question/?q=eu-west",
        "/admin/questions/answer/",
        "/admin/lifecycle/lifecycleevent/?event_type__exact=plan-started",
        "/admin/tokens/agenttoken/",
        "/admin/lifecycle/agentsession/?project_name=web",
        "/admin/questions/question/?answer__answered_by=agent-a",
        "/admin/questions/question/?kind__exact=question&created_at__year=2026",
    ],
)
def test_the_admin_lists_the_history(admin_client: Client, history: Question, path: str) -> None:
    response = admin_client.get(path)
    assert response.status_code == 200
    assert "0 results" not in response.text


def test_a_question_page_shows_its_answer_read_only(admin_client: Client, history: Question) -> None:
    page = admin_client.get(f"/admin/questions/question/{history.pk}/change/").content.decode()
    assert "eu-west-1" in page
    assert 'name="text"' not in page


def test_an_admin_creates_a_token_and_sees_it_once(admin_client: Client) -> None:
    response = admin_client.post("/admin/tokens/agenttoken/add/", {"name": "ci-bot", "scope": "answer"}, follow=True)
    shown = next(str(m) for m in response.context["messages"] if "shown once" in str(m))
    raw = shown.rsplit(" ", 1)[-1]
    assert AgentToken.authenticate(raw) == AgentToken.objects.get(name="ci-bot")


def test_an_admin_revokes_a_token(admin_client: Client) -> None:
    token, raw = AgentToken.issue("leaked")
    response = admin_client.post(
        "/admin/tokens/agenttoken/", {"action": "revoke", "_selected_action": [token.pk]}, follow=True
    )
    assert response.status_code == 200
    assert AgentToken.authenticate(raw) is None


@pytest.mark.parametrize("action", ["export_csv", "export_json"])
def test_an_admin_exports_questions_with_their_answers(admin_client: Client, history: Question, action: str) -> None:
    response = admin_client.post(
        "/admin/questions/question/", {"action": action, "_selected_action": [str(history.pk)]}
    )
    assert response.status_code == 200
    body = response.content.decode()
    if action == "export_json":
        (row,) = json.loads(body)
        assert (row["question"], row["answer"], row["answeredBy"], row["status"]) == (
            "Which region?",
            "eu-west-1",
            "agent-a",
            "answered",
        )
        assert row["secondsToAnswer"] is not None
    else:
        rows = list(csv.DictReader(io.StringIO(body)))
        assert [(r["question"], r["answer"], r["answeredBy"]) for r in rows] == [
            ("Which region?", "eu-west-1", "agent-a")
        ]


def test_an_answer_records_the_address_it_came_from(logged_in: Client, history: Question) -> None:
    token, _ = AgentToken.issue("agent-x")
    question = Question.ask(asker=token, asker_name="agent-x", text="From where?", options=[])[0]
    logged_in.post(f"/questions/{question.pk}/answer", {"answer": "here"}, REMOTE_ADDR="203.0.113.7")
    assert Question.objects.get(pk=question.pk).answer.remote_addr == "203.0.113.7"


@pytest.mark.parametrize(
    "page",
    [
        "/admin/questions/question/{question}/change/",
        "/admin/questions/answer/{answer}/change/",
        "/admin/lifecycle/lifecycleevent/{event}/change/",
        "/admin/lifecycle/agentsession/{session}/change/",
    ],
)
def test_records_are_read_only_for_every_admin(admin_client: Client, history: Question, page: str) -> None:
    event = LifecycleEvent.objects.get()
    path = page.format(
        question=history.pk, answer=history.answer.pk, event=event.pk, session=AgentSession.objects.get().pk
    )
    shown = admin_client.get(path)
    assert shown.status_code == 200
    assert 'name="_save"' not in shown.content.decode(), "no Save button"
    assert "/delete/" not in shown.content.decode(), "no Delete link"
    assert admin_client.get(path.replace("/change/", "/delete/")).status_code == 403
    assert admin_client.post(path, {"text": "rewritten"}).status_code == 403
    assert Question.objects.filter(pk=history.pk, text="Which region?").exists()


def test_purge_still_removes_old_records(history: Question) -> None:
    Question.objects.filter(pk=history.pk).update(created_at=timezone.now() - timedelta(days=100))
    call_command("purge", "--older-than", "90d", stdout=io.StringIO())
    assert not Question.objects.filter(pk=history.pk).exists()


def test_a_rules_decision_shows_which_rule_and_its_own_time(admin_client: Client, db: None) -> None:
    token, _ = AgentToken.issue("agent-a")
    rule = ApprovalRule.objects.create(tool_pattern="Bash", input_pattern="^npm test$", action="allow")
    payload = {"event": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "npm test"}}
    ruled = RuleDecision(Ruling("allow", (CompiledRule(rule),)), asked_at=timezone.now(), decided_in_us=42)
    question = service.record_rule_decision(token, "agent-a", payload, None, "Bash: npm test", ruled)
    listing = admin_client.get("/admin/questions/question/?kind__exact=approval").content.decode()
    assert "42 µs" in listing
    assert f"rule #{rule.pk} allow Bash /^npm test$/" in listing
    page = admin_client.get(f"/admin/questions/question/{question.pk}/change/").content.decode()
    assert "npm test" in page
    assert "&quot;decided_in_us&quot;: 42" in page


def test_an_admin_cannot_save_a_rule_that_would_break_matching(admin_client: Client, db: None) -> None:
    response = admin_client.post(
        "/admin/approvals/approvalrule/add/",
        {
            "position": "1",
            "tool_pattern": "Bash(",
            "input_pattern": "",
            "project": "",
            "folder": "",
            "action": "deny",
            "message": "",
        },
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "not a regular expression" in page
    assert not ApprovalRule.objects.exists()
