"""The approval kind: how a decision is parsed from the card's buttons and the API, and what each host reads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from approvals.models import ApprovalRule, CompiledRule
from approvals.rules import decide
from questions.kinds import InvalidAnswer, kind_of
from questions.kinds.approval import ApprovalForm, describe_suggestion, destructive, input_diff

KIND = kind_of("approval")
SUGGESTIONS = [
    {"type": "addDirectories", "directories": ["/home/dev/shop"], "destination": "session"},
    {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
    {
        "type": "addRules",
        "rules": [{"toolName": "Bash", "ruleContent": "npm test"}],
        "behavior": "allow",
        "destination": "localSettings",
    },
]


class Asked:
    kind = "approval"
    text = "May the agent run Bash: touch hi.txt?"
    options: list[dict[str, str]] = []
    allow_free_text = False

    def __init__(self, tool_name: str = "Bash", tool_input: Any = None) -> None:
        self.payload = {
            "tool_name": tool_name,
            "tool_input": tool_input if tool_input is not None else {"command": "touch hi.txt"},
            "permission_suggestions": SUGGESTIONS,
        }

    def option_values(self) -> list[str]:
        return []


def form(**data: str) -> Any:
    bound = KIND.form(Asked(), {"updatedInput": "", "message": "", **data})
    bound.is_valid()
    return bound


def test_each_button_gives_the_decision_the_host_reads() -> None:
    assert form(behavior="allow").reply.data == {"behavior": "allow"}
    edited = form(behavior="edit", updatedInput='{"command": "touch hello.txt"}').reply
    assert edited.data == {"behavior": "allow", "updatedInput": {"command": "touch hello.txt"}}
    assert form(behavior="deny", message="Use make").reply.data == {"behavior": "deny", "message": "Use make"}
    assert form(behavior="suggestion-2").reply.data == {"behavior": "allow", "updatedPermissions": [SUGGESTIONS[2]]}


def test_a_denial_without_a_message_still_tells_the_agent_why() -> None:
    assert form(behavior="deny").reply.data["message"] == "A person on your team denied this on Hook Bridge."


def test_it_refuses_edited_input_that_is_not_a_json_object_next_to_the_box() -> None:
    broken = form(behavior="edit", updatedInput="{command: oops")
    assert broken.reply is None
    assert "not JSON" in broken.input_problem
    not_object = form(behavior="edit", updatedInput='"rm -rf /"')
    assert not_object.reply is None
    assert "must be a JSON object" in not_object.input_problem


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("allow", "answer"),
        ({"behavior": "yes"}, "behavior"),
        ({"behavior": "deny", "message": 3}, "message"),
        ({"behavior": "allow", "suggestion": True}, "suggestion"),
        ({"behavior": "allow", "suggestion": 3}, "suggestion"),
        (
            {"behavior": "allow", "updatedPermissions": [{"type": "setMode", "mode": "bypassPermissions"}]},
            "updatedPermissions",
        ),
    ],
)
def test_the_api_is_refused_a_bad_decision_naming_the_field(value: Any, field: str) -> None:
    with pytest.raises(InvalidAnswer) as refused:
        KIND.parse(Asked(), value)
    assert refused.value.field == field


def test_the_prompt_tool_always_gets_the_input_to_run() -> None:
    asked = Asked()
    assert json.loads(KIND.result_text(asked, "", {"behavior": "allow"})) == {
        "behavior": "allow",
        "updatedInput": {"command": "touch hi.txt"},
    }
    assert KIND.structured_result(asked, {"behavior": "deny", "message": "no"}) == {"behavior": "deny", "message": "no"}


def test_suggestions_read_as_what_they_allow() -> None:
    assert describe_suggestion(SUGGESTIONS[0]) == "Always allow access to /home/dev/shop (this session)"
    assert describe_suggestion(SUGGESTIONS[1]) == "Allow, and switch to acceptEdits mode (this session)"
    assert describe_suggestion(SUGGESTIONS[2]) == "Always allow Bash(npm test) (localSettings)"


def test_an_edit_shows_as_a_diff_and_a_command_as_code() -> None:
    diff = input_diff("Edit", {"file_path": "app.py", "old_string": "x = 1\n", "new_string": "x = 2\n"})
    assert diff is not None
    assert "-x = 1" in diff
    assert "+x = 2" in diff
    assert "a/app.py" in diff
    assert input_diff("Write", {"file_path": "new.txt", "content": "hello\n"}) is None, "a write is no diff"
    assert input_diff("Bash", {"command": "ls"}) is None
    shown = ApprovalForm(KIND, Asked("Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"})).shown
    assert ("removed", "-a") in shown["diff"]
    assert ("added", "+b") in shown["diff"]
    assert ApprovalForm(KIND, Asked()).shown["command"] == "touch hi.txt"


@pytest.mark.parametrize(
    ("command", "found"),
    [
        ("rm -rf /", ["rm -rf"]),
        ("rm  -r build && RM -rf dist", ["rm -r", "RM -rf"]),
        ("git clean -fdx", ["git clean -fdx"]),
        ("git branch -D old", ["git branch -D"]),
        ("git branch -d merged", []),
        ('psql -c "drop   table users"', ["drop table"]),
        ("sudo reboot", ["reboot"]),
        ("cat rebooted.log", []),
        ("perform -r", []),
        ("git push --force-with-lease", []),
        ("npm test", []),
    ],
)
def test_a_destructive_command_is_named_as_it_is_written(command: str, found: list[str]) -> None:
    assert destructive(command) == found


def test_the_destructive_list_is_the_settings_and_only_a_shell_command_is_checked(settings: Any) -> None:
    settings.HOOKBRIDGE_DESTRUCTIVE_COMMANDS = ["make deploy"]
    assert ApprovalForm(KIND, Asked("Bash", {"command": "make  deploy prod"})).shown["destructive"] == ["make deploy"]
    assert ApprovalForm(KIND, Asked("Bash", {"command": "rm -rf /"})).shown["destructive"] == []
    assert ApprovalForm(KIND, Asked("Write", {"file_path": "make deploy", "content": ""})).shown["destructive"] == []
    settings.HOOKBRIDGE_DESTRUCTIVE_COMMANDS = []
    assert ApprovalForm(KIND, Asked("Bash", {"command": "make deploy"})).shown["destructive"] == []


def rule(**fields: Any) -> CompiledRule:
    return CompiledRule(ApprovalRule(pk=fields.pop("pk", 1), **fields))


def deciding(*args: Any) -> CompiledRule | None:
    ruling = decide(*args)
    return ruling.rule if ruling is not None else None


def test_a_deny_rule_wins_and_an_allow_needs_every_command() -> None:
    rules = [
        rule(pk=1, tool_pattern="Bash", input_pattern="rm -rf", action="deny", message="no"),
        rule(pk=2, tool_pattern="Bash", input_pattern="^npm (test|run lint)$", action="allow"),
        rule(pk=3, tool_pattern="Edit|Write", folder="/home/dev/shop", action="allow"),
    ]
    assert deciding("Bash", {"command": "npm test"}, "/x", rules) is rules[1]
    assert deciding("Bash", {"command": "npm test && rm -rf /"}, "/x", rules) is rules[0]
    assert deciding("Bash", {"command": "npm test && npm run lint"}, "/x", rules) is rules[1]
    assert deciding("Bash", {"command": "npm test && npm install"}, "/x", rules) is None
    assert deciding("Bash", {"command": "npm install"}, "/x", rules) is None
    assert deciding("Edit", {"file_path": "a"}, "/home/dev/shop/sub", rules) is rules[2]
    assert deciding("Edit", {"file_path": "a"}, "/home/dev/shopping", rules) is None
    assert deciding("MultiEdit", {}, "/home/dev/shop", rules) is None  # the tool pattern matches whole names


def test_a_rule_with_a_broken_pattern_or_a_deny_without_a_message_is_refused_in_the_admin() -> None:
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as refused:
        ApprovalRule(tool_pattern="Bash(", action="allow").full_clean()
    assert "tool_pattern" in refused.value.message_dict
    with pytest.raises(ValidationError) as refused:
        ApprovalRule(tool_pattern="Bash", action="deny").full_clean()
    assert "message" in refused.value.message_dict


def test_send_with_no_decision_chosen_is_refused_and_decides_nothing() -> None:
    # Choosing and sending are two acts (issue 29): a Send before a choice says so.
    sent = form()
    assert not sent.is_valid()
    assert sent.reply is None
    assert sent.general_problem == "Choose a decision (Allow, Deny, …), then Send."


def test_the_chosen_decision_is_kept_when_the_card_comes_back() -> None:
    assert form(behavior="edit", updatedInput="{not json").pressed == "edit"


def test_a_write_reads_as_the_whole_file_it_writes_not_a_diff_from_nothing() -> None:
    workflow = {"file_path": "/repo/.github/workflows/ci.yml", "content": "name: CI\non: push\njobs: {}\n"}
    shown = ApprovalForm(KIND, Asked("Write", workflow)).shown
    assert shown["diff"] is None
    assert shown["write"] == {"path": "/repo/.github/workflows/ci.yml", "lines": 3, "content": workflow["content"]}
    assert ApprovalForm(KIND, Asked("Write", {"file_path": "x", "content": 3})).shown["write"] is None


def test_an_edited_input_is_said_to_be_what_runs_not_what_was_asked() -> None:
    """Issue 53: a decision is for what the person saw; an edit is another input, said as such in the answer."""
    edited = form(behavior="edit", updatedInput='{"command": "touch hello.txt"}').reply
    assert edited.text == "Allowed Bash with changes: it runs `touch hello.txt`, not what was asked"
    unchanged = form(behavior="edit", updatedInput='{"command": "touch hi.txt"}').reply
    assert unchanged.text == "Allowed Bash (the edit changed nothing)"
    other = KIND.parse(Asked("Write", {"file_path": "a.txt", "content": "x"}), {
        "behavior": "allow", "updatedInput": {"file_path": "b.txt", "content": "x"}})  # fmt: skip
    assert other.text == "Allowed Write with changes: not the input that was asked"
