"""questions.queue: what someone gives up on soonest comes first; the rest oldest first, a page at a time (issue 29)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from questions import queue
from questions.kinds import Kind
from questions.models import Question
from tokens.models import AgentToken

pytestmark = [pytest.mark.django_db]


def ask(text: str, *, minutes_ago: float, kind: str = Kind.QUESTION, timeout: float | None = None) -> Question:
    token = AgentToken.objects.get_or_create(name="agent-a", defaults={"token_hash": "t" * 64})[0]
    payload = {"tool_name": "Bash", "tool_input": {}} if kind == Kind.APPROVAL else {}
    question, _ = Question.ask(
        asker=token, asker_name="agent-a", text=text, options=[], kind=kind, timeout_seconds=timeout, payload=payload
    )
    Question.objects.filter(pk=question.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))
    return Question.objects.get(pk=question.pk)


def order(page: queue.QueuePage) -> list[str]:
    return [re.search(r'data-question-id="([^"]+)"', card).group(1) for card in page.cards]  # type: ignore[union-attr]


def test_a_question_with_a_deadline_leads_soonest_first_then_the_rest_oldest_first() -> None:
    old = ask("Old?", minutes_ago=60)
    newer = ask("Newer?", minutes_ago=30)
    approval = ask("May it run?", minutes_ago=1, kind=Kind.APPROVAL)  # the host gives up ~9 min from now
    short = ask("Within five minutes?", minutes_ago=2, timeout=300)  # 3 min left: sooner than the approval
    assert short.deadline is not None
    assert approval.deadline is not None
    assert short.deadline < approval.deadline
    assert old.deadline is None
    assert order(queue.page()) == [str(short.pk), str(approval.pk), str(old.pk), str(newer.pk)]


def test_the_next_pages_hold_only_the_rest(settings: pytest.FixtureRequest) -> None:
    settings.HOOKBRIDGE_QUEUE_PAGE = 2  # type: ignore[attr-defined]
    rest = [ask(f"Rest {n}?", minutes_ago=50 - n) for n in range(3)]
    approval = ask("May it run?", minutes_ago=1, kind=Kind.APPROVAL)
    first = queue.page()
    assert order(first) == [str(approval.pk), str(rest[0].pk), str(rest[1].pk)]
    assert first.remaining == 1
    assert first.cursor is not None
    second = queue.page(queue.decode_cursor(first.cursor))
    assert order(second) == [str(rest[2].pk)]
    assert second.remaining == 0


def test_the_cursor_after_a_page_of_deadlines_starts_at_the_oldest_of_the_rest() -> None:
    # When the questions with a deadline fill the first message, the next page is the rest from its start.
    rest = [ask(f"Rest {n}?", minutes_ago=50 - n) for n in range(2)]
    ask("May it run?", minutes_ago=1, kind=Kind.APPROVAL)
    assert order(queue.page(queue.decode_cursor(queue.FROM_THE_START))) == [str(q.pk) for q in rest]


def test_an_approvals_deadline_is_the_hosts_hold() -> None:
    approval = ask("May it run?", minutes_ago=0, kind=Kind.APPROVAL)
    assert approval.deadline == approval.created_at + timedelta(seconds=settings.HOOKBRIDGE_APPROVAL_TIMEOUT)
