"""Answering from a terminal: manage.py questions list|show|answer|dismiss."""

from __future__ import annotations

import getpass
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from questions.models import CancelReason, Question, Status
from tokens.models import AgentToken

WHO = f"{getpass.getuser()} (terminal)"


def run(*args: str) -> str:
    out = StringIO()
    call_command("questions", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def question(db: None) -> Question:
    token, _ = AgentToken.issue("agent-a")
    options = [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]
    return Question.ask(asker=token, asker_name="agent-a", text="Ship it?", options=options, allow_free_text=False)[0]


def test_list_and_show(question: Question) -> None:
    listed = run("list")
    assert str(question.pk) in listed
    assert "agent-a" in listed
    assert "Ship it?" in listed
    shown = run("show", str(question.pk))
    assert "Ship it?" in shown
    assert "--option yes: Yes" in shown


def test_answer_with_an_option_and_refuse_a_second(question: Question) -> None:
    assert "Answered" in run("answer", str(question.pk), "--option", "yes")
    stored = Question.objects.get(pk=question.pk)
    assert (stored.status, stored.answer.text, stored.answer.answered_by, stored.answer.source) == (
        Status.ANSWERED,
        "yes",
        WHO,
        "terminal",
    )
    with pytest.raises(CommandError, match=re.escape(f"already answered by {WHO}")):
        run("answer", str(question.pk), "--option", "no")
    assert "No questions are waiting." in run("list")


def test_a_bad_answer_is_refused_and_changes_nothing(question: Question) -> None:
    with pytest.raises(CommandError, match="only accepts one of its options"):
        run("answer", str(question.pk), "maybe")
    with pytest.raises(CommandError, match="not one of this question's options"):
        run("answer", str(question.pk), "--option", "perhaps")
    with pytest.raises(CommandError, match="not a question id"):
        run("answer", "nope", "x")
    assert Question.objects.get(pk=question.pk).status == Status.PENDING


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--json", "[" * 5000 + "]" * 5000], "--json is nested too deeply: at most 64 levels"),
        (["--json", '{"x": NaN}'], "--json NaN is not a JSON number"),
        (["--json", "{nope"], "--json is not valid JSON"),
        (["free text with a NUL \x00"], "text: must not contain a NUL character"),
    ],
)
def test_bad_json_or_text_is_refused_with_a_reason_and_changes_nothing(
    question: Question, args: list[str], message: str
) -> None:
    with pytest.raises(CommandError, match=re.escape(message)):
        run("answer", str(question.pk), *args)
    assert Question.objects.get(pk=question.pk).status == Status.PENDING


def test_dismiss(question: Question) -> None:
    assert "will proceed on its own" in run("dismiss", str(question.pk))
    stored = Question.objects.get(pk=question.pk)
    assert (stored.cancel_reason, stored.dismissed_by) == (CancelReason.DISMISSED, WHO)
    with pytest.raises(CommandError, match="dismissed"):
        run("dismiss", str(question.pk))
