"""Every change of who decides, and every decision, is one audit entry with its actor, written with the change."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from audit.models import Entry
from projects.models import Project, Role
from questions.models import AlreadyResolved, Question
from tokens.models import AgentToken


def entries(action: str) -> list[Entry]:
    return list(Entry.objects.filter(action=action).order_by("seq"))


def only(action: str) -> Entry:
    found = entries(action)
    assert len(found) == 1, [str(e) for e in found]
    return found[0]


@pytest.fixture
def asked(agent: tuple[AgentToken, str]) -> Question:
    return Question.ask(asker=agent[0], asker_name="agent-a", text="Ship it?", options=[])[0]


def test_an_answer_through_the_json_api_is_recorded_as_the_tokens_with_what_was_said(
    client: Client, asked: Question, user: User
) -> None:
    bot, raw = AgentToken.issue("answer-bot", scope="answer", user=user)
    response = client.post(
        "/api/mcp-answer", json.dumps({"questionId": str(asked.pk), "answer": "yes, ship"}),
        content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {raw}", HTTP_USER_AGENT="curl/8",
        HTTP_TRACEPARENT="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    )  # fmt: skip
    assert response.status_code == 200, response.content
    entry = only("question.answered")
    assert (entry.actor_kind, entry.actor, entry.actor_id) == ("token", "token answer-bot (of alice)", str(bot.pk))
    assert entry.target_id == str(asked.pk)
    assert entry.project == "default"
    assert entry.details["answer"] == "yes, ship"
    assert entry.details["source"] == "api"
    assert entry.user_agent == "curl/8"
    assert entry.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736", "the caller's W3C trace id"
    assert len(entry.request_id) == 32


def test_a_token_made_on_the_command_line_is_recorded_as_its_os_users_doing(db: None) -> None:
    call_command("create_token", "claude-code", stdout=StringIO())
    entry = only("token.issued")
    assert entry.actor.endswith("(command line)")
    assert entry.target.startswith("token claude-code (hb_")
    assert "token_hash" not in entry.details["after"], "a secret's digest is never recorded"


def test_a_revoked_token_is_recorded_once_and_revoking_it_again_adds_nothing(agent: tuple[AgentToken, str]) -> None:
    token = agent[0]
    token.revoke()
    token.revoke()
    assert len(entries("token.revoked")) == 1


def test_a_sign_in_and_a_refused_one_are_recorded_with_the_address(client: Client, user: User) -> None:
    refused = client.post("/accounts/login/", {"username": "alice", "password": "wrong"}, REMOTE_ADDR="10.0.0.7")
    assert refused.status_code == 200
    signed = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice-123"}, REMOTE_ADDR="10.0.0.7")
    assert signed.status_code == 302
    failed = only("signin.failed")
    assert failed.details == {"username": "alice"}
    assert failed.ip == "10.0.0.7"
    succeeded = only("signin.succeeded")
    assert (succeeded.actor, succeeded.ip) == ("alice", "10.0.0.7")


def test_a_role_change_and_a_removal_are_recorded_with_before_and_after(db: None) -> None:
    project = Project.objects.create(name="shop")
    bob = User.objects.create_user("bob")
    project.set_member(bob, Role.ANSWERER)
    project.set_member(bob, Role.ADMIN)
    project.set_member(bob, Role.ADMIN)  # no change: no entry
    project.remove_member(bob)
    # Bob joined the default project as a new person does, then shop.
    assert [e.project for e in entries("member.added")] == ["default", "shop"]
    assert only("member.role_changed").details["changes"]["role"] == ["answerer", "admin"]
    assert only("member.removed").target == "member bob of shop"


def test_deactivating_a_person_is_recorded(user: User) -> None:
    user.is_active = False
    user.save()
    assert only("person.deactivated").details["changes"]["is_active"] == [True, False]


def test_a_dismissal_is_recorded_and_a_second_one_refused_adds_nothing(asked: Question) -> None:
    asked.dismiss("alice")
    with pytest.raises(AlreadyResolved, match="dismissed by alice"):
        asked.dismiss("bob")
    assert only("question.dismissed").details["dismissed_by"] == "alice"


def test_an_export_of_history_is_recorded_with_how_many_it_took(client: Client, world: Any) -> None:
    client.force_login(world.people["root"])
    response = client.get("/history/?format=json")
    assert response.status_code == 200
    entry = only("export.downloaded")
    assert entry.details["format"] == "json"
    assert entry.details["questions"] == len(response.json())


def test_no_entry_is_written_when_its_change_is_rolled_back(db: None) -> None:
    from django.db import transaction

    def issue_then_fail() -> None:
        with transaction.atomic():
            AgentToken.issue("never")
            raise RuntimeError("the change fails")

    with pytest.raises(RuntimeError):
        issue_then_fail()
    assert not Entry.objects.exists()


def test_a_person_approving_an_oauth_client_is_recorded_once_as_theirs(user: User) -> None:
    from oauth2_provider.models import get_application_model

    client = get_application_model().objects.create(
        name="Claude Code", client_type="public", authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1/callback",
    )  # fmt: skip
    first = AgentToken.for_oauth_grant(user, client)
    again = AgentToken.for_oauth_grant(user, client)
    assert first == again
    granted = only("oauth.granted")
    assert (granted.actor, granted.details["client"]) == ("alice", "Claude Code")
    assert granted.target_id == str(first.pk)


def test_a_session_grant_and_its_revocation_are_recorded(agent: tuple[AgentToken, str], user: User) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from approvals.models import Grant
    from lifecycle.models import AgentSession

    session = AgentSession.open(token=agent[0], name="run", project="shop")
    grant = Grant.objects.create(
        session=session, tool_name="Bash", command_prefix="npm test", granted_by=user,
        expires_at=timezone.now() + timedelta(minutes=30),
    )  # fmt: skip
    assert grant.revoke("alice")
    assert not grant.revoke("alice")
    assert only("grant.created").details["after"]["command_prefix"] == "npm test"
    assert only("grant.revoked").details == {"revoked_by": "alice"}
