"""“Allow and make a rule” (issue 42): the narrowest rule proposed, what it decides shown, saved only when asked."""

from __future__ import annotations

import re

from django.test import Client
from django.urls import reverse

from claudecode import policy
from claudecode.models import ApprovalRule
from claudecode.rule_proposal import proposed_patterns
from questions.kinds import Kind
from questions.models import Question, Status
from testing.project_world import World, as_
from tokens.models import AgentToken


def approval(token: AgentToken, tool_input: dict[str, str], tool: str = "Bash") -> Question:
    payload = {"tool_name": tool, "tool_input": tool_input, "cwd": "/home/dev/web"}
    return Question.ask(
        asker=token, asker_name=token.name, text=str(tool_input), options=[], kind=Kind.APPROVAL, payload=payload
    )[0]


def url(question: Question) -> str:
    return reverse("claudecode:propose-rule", args=[question.pk])


def test_it_proposes_the_command_s_first_two_words_and_lists_what_it_would_allow(world: World) -> None:
    token = world.tokens["web"]
    first = approval(token, {"command": "npm test -- --watch"})
    second = approval(token, {"command": "npm test"})
    other = approval(token, {"command": "npm install left-pad"})
    response = as_(world, "adm").get(url(first))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'value="Bash"' in body
    assert 'value="^npm test(\\s|$)"' in body
    assert "It would allow now 2 waiting approvals" in body
    assert "npm test -- --watch" in body
    assert "npm install left-pad" not in body
    assert ApprovalRule.objects.count() == 0, "a proposal saves nothing"
    for question in (first, second, other):
        question.refresh_from_db()
        assert question.status == Status.PENDING


def test_a_file_tool_is_proposed_by_its_path(world: World) -> None:
    edit = approval(world.tokens["web"], {"file_path": "/home/dev/web/app.py", "old_string": "a", "new_string": "b"},
                    tool="Edit")  # fmt: skip
    body = as_(world, "adm").get(url(edit)).content.decode()
    assert 'value="Edit"' in body
    assert "file_path" in body
    assert "It would allow now 1 waiting approval" in body


def test_an_edited_pattern_is_checked_again_before_saving(world: World) -> None:
    token = world.tokens["web"]
    mine, other = approval(token, {"command": "npm test"}), approval(token, {"command": "npm install x"})
    response = as_(world, "adm").post(url(mine), {"tool_pattern": "Bash", "input_pattern": "^npm ", "check": "1"})
    body = response.content.decode()
    assert "It would allow now 2 waiting approvals" in body
    assert "Save the rule and allow 2" in body
    assert ApprovalRule.objects.count() == 0
    other.refresh_from_db()
    assert other.status == Status.PENDING


def test_saving_allows_this_and_every_waiting_one_it_decides_and_every_later_one(world: World) -> None:
    token = world.tokens["web"]
    mine, same, other = (approval(token, {"command": c}) for c in ("make test", "make test-unit", "make deploy"))
    response = as_(world, "adm").post(url(mine), {"tool_pattern": "Bash", "input_pattern": "^make test"})
    assert response.status_code == 200
    assert "Allowed now: 2." in response.content.decode()
    rule = ApprovalRule.objects.get()
    assert (rule.action, rule.project, rule.input_pattern) == ("allow", world.web, "^make test")
    for question, status in ((mine, Status.ANSWERED), (same, Status.ANSWERED), (other, Status.PENDING)):
        question.refresh_from_db()
        assert question.status == status
    mine.refresh_from_db()
    assert mine.answer.data == {"behavior": "allow"}
    assert mine.answer.answered_by == "adm"
    later = policy.decide("Bash", {"command": "make test-e2e"}, "/home/dev/web", policy.rules(), world.web.pk)
    assert later is not None
    assert later.action == "allow"


def test_a_pattern_that_is_no_regular_expression_is_refused_naming_the_field(world: World) -> None:
    mine = approval(world.tokens["web"], {"command": "make test"})
    response = as_(world, "adm").post(url(mine), {"tool_pattern": "Bash", "input_pattern": "make (test"})
    assert response.status_code == 422
    assert "input_pattern: not a regular expression" in response.content.decode()
    assert ApprovalRule.objects.count() == 0
    mine.refresh_from_db()
    assert mine.status == Status.PENDING


def test_a_rule_that_would_not_decide_its_own_approval_is_refused(world: World) -> None:
    mine = approval(world.tokens["web"], {"command": "make test"})
    response = as_(world, "adm").post(url(mine), {"tool_pattern": "Bash", "input_pattern": "^npm"})
    assert response.status_code == 422
    assert "would not decide the approval it is made from" in response.content.decode()
    assert ApprovalRule.objects.count() == 0


def test_only_the_project_s_admins_make_its_rules(world: World) -> None:
    mine = approval(world.tokens["web"], {"command": "make test"})
    response = as_(world, "ann").post(url(mine), {"tool_pattern": "Bash", "input_pattern": "^make"})
    assert response.status_code == 403
    assert "Only an admin of web makes its rules." in response.content.decode()
    assert ApprovalRule.objects.count() == 0
    assert as_(world, "out").get(url(mine)).status_code == 404  # another project's approval is not there at all
    assert Client().get(url(mine)).status_code == 302


def test_a_proposed_pattern_matches_its_command_as_typed_whatever_it_holds() -> None:
    for command in ["npm test", "a.b c-d", "x\\y (z) [q] ^$ *+? {1} |", "git log --format='%h %s'"]:
        pattern = proposed_patterns_for(command)
        assert re.search(pattern, command), (command, pattern)
        assert not re.search(pattern, "echo " + command)


def proposed_patterns_for(command: str) -> str:
    question = Question(kind=Kind.APPROVAL, payload={"tool_name": "Bash", "tool_input": {"command": command}})
    return proposed_patterns(question)["input_pattern"]
