"""questions.decisions.Decision: an approval's decision, made and read the one way every caller uses."""

from __future__ import annotations

import pytest

from questions.decisions import Decision


def test_a_denial_carries_its_message_and_an_allow_only_what_it_changes() -> None:
    assert Decision.deny("not on main").as_dict() == {"behavior": "deny", "message": "not on main"}
    assert Decision.allow().as_dict() == {"behavior": "allow"}
    edited = Decision.allow(updated_input={"command": "ls"}, updated_permissions=[{"type": "addRules"}])
    assert edited.as_dict() == {
        "behavior": "allow",
        "updatedInput": {"command": "ls"},
        "updatedPermissions": [{"type": "addRules"}],
    }


@pytest.mark.parametrize(
    "data",
    [
        {"behavior": "deny", "message": "no"},
        {"behavior": "allow"},
        {"behavior": "allow", "updatedInput": {"a": 1}},
        {"behavior": "allow", "updatedPermissions": [{"type": "setMode", "mode": "plan"}]},
    ],
)
def test_what_it_writes_reads_back_the_same(data: dict[str, object]) -> None:
    decision = Decision.of(data)
    assert decision is not None
    assert decision.as_dict() == data


@pytest.mark.parametrize("data", [None, {}, {"behavior": "ask"}, {"answer": "yes"}, {"behavior": None}])
def test_anything_else_holds_no_decision(data: dict[str, object] | None) -> None:
    assert Decision.of(data) is None


def test_only_an_allow_is_allowed() -> None:
    assert Decision.allow().allowed
    assert not Decision.deny("x").allowed
