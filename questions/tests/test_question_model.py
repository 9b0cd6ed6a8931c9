"""The answer flow on the model: first answer wins, re-attaching, cancelling."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from questions.models import AlreadyResolved, CancelReason, InvalidAnswer, Question, Status
from tokens.models import AgentToken

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
    assert reattached
    assert again.pk == first.pk
    assert Question.objects.count() == 1


def test_it_does_not_reattach_another_agents_or_a_different_question(token: AgentToken) -> None:
    other, _ = AgentToken.issue("agent-b")
    first, _ = ask(token)
    assert ask(other)[0].pk != first.pk
    assert ask(token, text="Something else?")[0].pk != first.pk
    assert ask(token, options=OPTIONS)[0].pk != first.pk
    assert Question.objects.count() == 4


def test_a_question_whose_agent_stopped_waiting_stays_answerable_and_marked(token: AgentToken) -> None:
    first, _ = ask(token)
    assert first.agent_stopped_waiting("the client gave up waiting: Request timed out")
    stored = Question.objects.get(pk=first.pk)
    assert stored.status == Status.PENDING
    assert stored.agent_left
    assert stored.agent_left_reason == "the client gave up waiting: Request timed out"
    assert stored.agent_left_at is not None
    assert stored.kept_until == stored.agent_left_at + timedelta(seconds=1800)
    assert not stored.agent_stopped_waiting("again"), "the first mark stands"
    stored.record_answer("given while away", by_token=token)
    assert Question.objects.get(pk=first.pk).status == Status.ANSWERED


def test_it_hands_over_an_answer_given_after_the_agent_stopped_waiting(token: AgentToken) -> None:
    first, _ = ask(token)
    first.agent_stopped_waiting("the connection to the agent closed")
    first.record_answer("given while away", by_token=token)
    again, reattached = ask(token)
    assert reattached
    assert again.status == Status.ANSWERED
    assert again.answer.text == "given while away"

    again.mark_delivered()
    fresh, reattached = ask(token)
    assert not reattached
    assert fresh.pk != first.pk


def test_the_agent_coming_back_clears_the_mark(token: AgentToken) -> None:
    first, _ = ask(token)
    first.agent_stopped_waiting("the server restarted")
    again, reattached = ask(token)
    assert reattached
    assert again.pk == first.pk
    assert again.agent_waiting_again()
    assert not Question.objects.get(pk=first.pk).agent_left
    assert not again.agent_waiting_again(), "nothing to clear twice"


def test_an_abort_takes_the_question_off_but_a_re_ask_within_the_window_brings_it_back(token: AgentToken) -> None:
    first, _ = ask(token)
    assert first.abort("aborted at the agent: AbortError: This operation was aborted")
    aborted = Question.objects.get(pk=first.pk)
    assert (aborted.status, aborted.cancel_reason) == (Status.CANCELLED, CancelReason.CLIENT_CANCELLED)
    assert aborted.agent_left_reason.endswith("This operation was aborted")
    with pytest.raises(AlreadyResolved, match="aborted at the agent"):
        aborted.record_answer("too late", by_token=token)

    again, reattached = ask(token)
    assert reattached
    assert again.pk == first.pk
    assert (again.status, again.cancel_reason, again.agent_left_at) == (Status.PENDING, "", None)
    assert Question.objects.count() == 1


def test_after_the_window_an_aborted_question_is_asked_anew(token: AgentToken) -> None:
    first, _ = ask(token)
    first.abort("aborted at the agent")
    Question.objects.filter(pk=first.pk).update(resolved_at=timezone.now() - timedelta(seconds=1801))
    again, reattached = ask(token)
    assert not reattached
    assert again.pk != first.pk


def test_a_timed_out_question_is_asked_anew(token: AgentToken) -> None:
    first, _ = ask(token)
    assert first.time_out()
    again, reattached = ask(token)
    assert not reattached
    assert again.pk != first.pk


def test_the_sweep_withdraws_what_nobody_waited_for_within_the_window(token: AgentToken) -> None:
    left_long_ago, _ = ask(token, text="Left long ago?")
    left_recently, _ = ask(token, text="Left recently?")
    waited_on, _ = ask(token, text="Still waited on?")
    for question in (left_long_ago, left_recently):
        question.agent_stopped_waiting("the connection to the agent closed")
    Question.objects.filter(pk=left_long_ago.pk).update(agent_left_at=timezone.now() - timedelta(seconds=1801))

    assert Question.expire_abandoned() == 1
    gone = Question.objects.get(pk=left_long_ago.pk)
    assert (gone.status, gone.cancel_reason) == (Status.CANCELLED, CancelReason.AGENT_GONE)
    assert "did not ask again" in gone.resolution_text()
    assert Question.objects.get(pk=left_recently.pk).status == Status.PENDING
    assert Question.objects.get(pk=waited_on.pk).status == Status.PENDING
    _, reattached = ask(token, text="Left long ago?")
    assert not reattached, "after the window the same question is a new one"


def test_the_sweep_times_out_a_question_past_its_own_timeout(token: AgentToken) -> None:
    question, _ = ask(token, timeout_seconds=60)
    question.agent_stopped_waiting("the connection to the agent closed")
    assert Question.expire_abandoned() == 0
    Question.objects.filter(pk=question.pk).update(created_at=timezone.now() - timedelta(seconds=61))
    assert Question.expire_abandoned() == 1
    assert Question.objects.get(pk=question.pk).status == Status.TIMED_OUT


def test_a_cancel_does_not_undo_an_answer(token: AgentToken) -> None:
    question, _ = ask(token)
    question.record_answer("done", by_token=token)
    assert not Question.objects.get(pk=question.pk).cancel(CancelReason.CLIENT_DISCONNECTED)
    assert Question.objects.get(pk=question.pk).status == Status.ANSWERED


def test_a_question_withdrawn_after_the_window_takes_no_answer(token: AgentToken) -> None:
    question, _ = ask(token)
    question.cancel(CancelReason.AGENT_GONE)
    with pytest.raises(AlreadyResolved, match="did not ask again"):
        question.record_answer("too late", by_token=token)


def test_a_reasks_look_up_reads_the_fingerprints_rows_not_the_askers_history(token: AgentToken) -> None:
    # Ordered by created_at, SQLite walked the asker's whole history when the index had no created_at
    # (new questions slowed as history grew: bench/compare.py's fan-out after 10,000 questions).
    plan = Question.objects.reattach_target(token, token.name, "f" * 64).explain()
    assert "fingerprint=?" in plan, plan


def test_many_calls_cut_at_once_are_marked_in_chunks_and_told_to_dashboards_once(
    token: AgentToken, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    # Each telling makes the event stream send the whole queue: 2,000 calls cut at once were told
    # once per UPDATE of 500, and building the queue four times was most of the time to let them go.
    from questions import endings, signals
    from questions.asking import _mark_left

    monkeypatch.setattr(endings, "PER_UPDATE", 2)
    asked = [ask(token, text=f"Proceed {n}?")[0].pk for n in range(5)]
    told: list[object] = []

    def note(sender: object, **kwargs: object) -> None:
        told.append(sender)

    signals.questions_changed.connect(note)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            _mark_left({"the connection to the agent closed": asked})
    finally:
        signals.questions_changed.disconnect(note)
    assert len(told) == 1
    assert Question.objects.filter(pk__in=asked, agent_left_at__isnull=False).count() == 5


def test_an_answer_is_shown_once_unless_its_value_says_more(token: AgentToken) -> None:
    options = [{"value": "yes", "label": "Yes"}, {"value": "blue-green", "label": "Blue/green"}]
    plain, _ = ask(token, "Ship?", options=options)
    assert plain.record_answer("yes", by_token=token, option="yes").display == "Yes"
    other, _ = ask(token, "Strategy?", options=options)
    assert other.record_answer("blue-green", by_token=token, option="blue-green").display == "Blue/green (blue-green)"


def test_the_architecture_doc_shows_the_endings_table_the_code_applies() -> None:
    from questions import endings

    doc = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    assert endings.as_markdown() in doc


def test_an_ending_refuses_fields_it_does_not_set_and_moves_nothing(token: AgentToken) -> None:
    from questions import endings

    question, _ = ask(token, text="Proceed?")
    with pytest.raises(TypeError, match="timed out: give nothing"):
        endings.apply(Question.objects.all(), [question.pk], endings.TIMED_OUT, dismissed_by="ann")
    question.refresh_from_db()
    assert question.status == Status.PENDING
