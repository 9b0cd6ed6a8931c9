"""The answer flow on the model: first answer wins, re-attaching, cancelling."""

from __future__ import annotations

import pytest

from mcpapi.models import AgentToken
from questions.models import AlreadyResolved, CancelReason, InvalidAnswer, Question, Status

OPTIONS = [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]


def ask(token: AgentToken, text: str = "Proceed?", **kw: object) -> tuple[Question, bool]:
    fields: dict[str, object] = {"options": [], "allow_free_text": True, **kw}
    return Question.ask(asker=token, asker_name=token.name, text=text, **fields)  # type: ignore[arg-type]


@pytest.fixture
def token(agent: tuple[AgentToken, str]) -> AgentToken:
    return agent[0]


def test_it_records_the_first_answer(token: AgentToken, user: object) -> None:
    question, reattached = ask(token)
    assert not reattached
    answer = question.record_answer("yes", by_user=user)
    question.refresh_from_db()
    assert question.status == Status.ANSWERED
    assert (answer.text, answer.answered_by, answer.source) == ("yes", "alice", "dashboard")


def test_it_rejects_a_second_answer(token: AgentToken, user: object) -> None:
    question, _ = ask(token)
    question.record_answer("first", by_user=user)
    stale = Question.objects.get(pk=question.pk)
    stale.status = Status.PENDING  # a copy loaded before the first answer landed
    with pytest.raises(AlreadyResolved, match="already answered by alice"):
        stale.record_answer("second", by_token=token)
    question.refresh_from_db()
    assert question.answer.text == "first"


def test_it_rejects_an_option_that_is_not_offered(token: AgentToken) -> None:
    question, _ = ask(token, options=OPTIONS)
    with pytest.raises(InvalidAnswer) as error:
        question.record_answer(option="c", by_token=token)
    assert error.value.field == "option"
    assert Question.objects.get(pk=question.pk).status == Status.PENDING


def test_it_rejects_free_text_when_only_options_are_allowed(token: AgentToken) -> None:
    question, _ = ask(token, options=OPTIONS, allow_free_text=False)
    with pytest.raises(InvalidAnswer, match="only accepts one of its options"):
        question.record_answer("something else", by_token=token)
    assert question.record_answer("b", by_token=token).option == "b"


def test_it_rejects_an_empty_answer(token: AgentToken) -> None:
    question, _ = ask(token)
    with pytest.raises(InvalidAnswer, match="empty"):
        question.record_answer("   ", by_token=token)


def test_it_reattaches_to_a_pending_question_from_the_same_agent(token: AgentToken) -> None:
    first, _ = ask(token)
    again, reattached = ask(token)
    assert reattached and again.pk == first.pk
    assert Question.objects.count() == 1


def test_it_does_not_reattach_another_agents_or_a_different_question(token: AgentToken) -> None:
    other, _ = AgentToken.issue("agent-b")
    first, _ = ask(token)
    assert ask(other)[0].pk != first.pk
    assert ask(token, text="Something else?")[0].pk != first.pk
    assert ask(token, options=OPTIONS)[0].pk != first.pk
    assert Question.objects.count() == 4


def test_it_revives_a_question_cancelled_by_a_disconnect(token: AgentToken) -> None:
    first, _ = ask(token)
    assert first.cancel(CancelReason.CLIENT_DISCONNECTED)
    again, reattached = ask(token)
    assert reattached and again.pk == first.pk
    assert again.status == Status.PENDING and again.cancel_reason == ""


def test_it_hands_over_an_answer_that_was_never_delivered(token: AgentToken) -> None:
    first, _ = ask(token)
    first.cancel(CancelReason.CLIENT_DISCONNECTED)
    first.record_answer("given while away", by_token=token)
    again, reattached = ask(token)
    assert reattached and again.status == Status.ANSWERED and again.answer.text == "given while away"

    again.mark_delivered()
    fresh, reattached = ask(token)
    assert not reattached and fresh.pk != first.pk


@pytest.mark.parametrize("finish", ["client_cancelled", "timed_out"])
def test_it_asks_anew_after_an_explicit_cancel_or_a_timeout(token: AgentToken, finish: str) -> None:
    first, _ = ask(token)
    if finish == "timed_out":
        assert first.time_out()
    else:
        assert first.cancel(CancelReason.CLIENT_CANCELLED)
    again, reattached = ask(token)
    assert not reattached and again.pk != first.pk


def test_a_cancel_does_not_undo_an_answer(token: AgentToken) -> None:
    question, _ = ask(token)
    question.record_answer("done", by_token=token)
    assert not Question.objects.get(pk=question.pk).cancel(CancelReason.CLIENT_DISCONNECTED)
    assert Question.objects.get(pk=question.pk).status == Status.ANSWERED


def test_a_client_cancelled_question_takes_no_answer(token: AgentToken) -> None:
    question, _ = ask(token)
    question.cancel(CancelReason.CLIENT_CANCELLED)
    with pytest.raises(AlreadyResolved, match="cancelled"):
        question.record_answer("too late", by_token=token)
