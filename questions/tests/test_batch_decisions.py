"""Batch decisions (issue 42): several approvals allowed or denied in one step, each as if from its own card."""

from __future__ import annotations

from typing import Any

from django.test import Client
from django.urls import reverse

from questions.kinds import Kind
from questions.models import Question, Status
from testing.project_world import World, as_
from tokens.models import AgentToken

URL = reverse("questions:batch")


def approval(token: AgentToken, command: str) -> Question:
    payload = {"tool_name": "Bash", "tool_input": {"command": command}}
    return Question.ask(
        asker=token, asker_name=token.name, text=command, options=[], kind=Kind.APPROVAL, payload=payload
    )[0]


def decide(client: Client, questions: list[Any], behavior: str, message: str = "") -> Any:
    return client.post(URL, {"question": [str(getattr(q, "pk", q)) for q in questions], "behavior": behavior,
                             "message": message})  # fmt: skip


def test_it_allows_every_chosen_approval_and_says_what_ran(world: World) -> None:
    first, second = approval(world.tokens["web"], "make test"), approval(world.tokens["web"], "make lint")
    response = decide(as_(world, "ann"), [first, second], "allow")
    assert response.status_code == 200
    for question in (first, second):
        question.refresh_from_db()
        assert question.status == Status.ANSWERED
        assert question.answer.answered_by == "ann"
        assert question.answer.data == {"behavior": "allow"}
    assert "Allowed 2: web-agent runs `make test`; web-agent runs `make lint`" in response.content.decode()


def test_it_denies_them_all_with_the_one_reason(world: World) -> None:
    chosen = [approval(world.tokens["web"], f"rm -rf build-{n}") for n in range(3)]
    response = decide(as_(world, "ann"), chosen, "deny", "Use make clean instead")
    assert response.status_code == 200
    for question in chosen:
        question.refresh_from_db()
        assert question.answer.data == {"behavior": "deny", "message": "Use make clean instead"}
    assert "Denied 3:" in response.content.decode()


def test_it_skips_one_decided_meanwhile_says_so_and_decides_the_rest(world: World) -> None:
    gone, waiting = approval(world.tokens["web"], "make a"), approval(world.tokens["web"], "make b")
    gone.record_answer({"behavior": "deny"}, by_name="bob")
    response = decide(as_(world, "ann"), [gone, waiting], "allow")
    assert response.status_code == 200
    body = response.content.decode()
    assert "Allowed 1: web-agent runs `make b`" in body
    assert "Not decided here: “" in body
    assert "was answered by bob" in body
    gone.refresh_from_db()
    assert gone.answer.data["behavior"] == "deny"


def test_a_viewer_decides_nothing_and_is_told_why(world: World) -> None:
    question = approval(world.tokens["web"], "make deploy")
    response = decide(as_(world, "vic"), [question], "allow")
    assert "you may only look in web" in response.content.decode()
    question.refresh_from_db()
    assert question.status == Status.PENDING


def test_an_approval_in_a_project_not_seen_is_refused_naming_the_field_and_nothing_changes(world: World) -> None:
    theirs, mine = approval(world.tokens["ops"], "make ops"), approval(world.tokens["web"], "make web")
    response = decide(as_(world, "ann"), [mine, theirs], "allow")
    assert response.status_code == 422
    body = response.content.decode()
    assert f"Nothing was decided. question: {theirs.pk} is not an approval you can see." in body
    for question in (theirs, mine):
        question.refresh_from_db()
        assert question.status == Status.PENDING


def test_a_question_that_is_no_approval_is_refused(world: World) -> None:
    response = decide(as_(world, "ann"), [world.questions["web"]], "allow")
    assert response.status_code == 422
    assert "is not an approval you can see" in response.content.decode()
    world.questions["web"].refresh_from_db()
    assert world.questions["web"].status == Status.PENDING


def test_a_decision_other_than_allow_or_deny_is_refused_naming_behavior(world: World) -> None:
    question = approval(world.tokens["web"], "make x")
    response = decide(as_(world, "ann"), [question], "edit")
    assert response.status_code == 422
    assert "behavior: Select a valid choice." in response.content.decode()
    response = decide(as_(world, "ann"), ["not-a-uuid"], "allow")
    assert response.status_code == 422
    assert "Nothing was decided. question: “not-a-uuid” is not a valid UUID." in response.content.decode()
    question.refresh_from_db()
    assert question.status == Status.PENDING


def test_none_chosen_is_refused(world: World) -> None:
    response = as_(world, "ann").post(URL, {"behavior": "allow"})
    assert response.status_code == 422
    assert "question: Choose at least one approval." in response.content.decode()


def test_it_takes_only_a_post_from_a_person_logged_in(world: World) -> None:
    question = approval(world.tokens["web"], "make y")
    assert as_(world, "ann").get(URL).status_code == 405
    assert decide(Client(), [question], "allow").status_code == 302
    question.refresh_from_db()
    assert question.status == Status.PENDING


def test_the_toast_says_an_edit_and_a_write_by_their_files_not_their_question_text(world: World) -> None:
    """Issue 55, point 4: an Edit read "runs `May the agent run Edit: /home/alice/api/src/models/order.py?`"."""
    token = world.tokens["web"]
    edit = Question.ask(
        asker=token, asker_name=token.name, text="May the agent run Edit: /home/alice/api/src/models/order.py?",
        options=[], kind=Kind.APPROVAL,
        payload={"tool_name": "Edit", "tool_input": {"file_path": "/home/alice/api/src/models/order.py",
                                                       "old_string": "a", "new_string": "b"}},
    )[0]  # fmt: skip
    write = Question.ask(
        asker=token,
        asker_name=token.name,
        text="May the agent run Write?",
        options=[],
        kind=Kind.APPROVAL,
        payload={"tool_name": "Write", "tool_input": {"file_path": "README.md", "content": "one\ntwo\n"}},
    )[0]
    body = decide(as_(world, "ann"), [edit, write], "allow").content.decode()
    assert "web-agent edits `/home/alice/api/src/models/order.py`" in body
    assert "web-agent writes 2 lines to `README.md`" in body
    assert "May the agent run" not in body
