"""The pending queue a page at a time: cards that fit in one message, and where the next page starts.

A dashboard's first state and every push are one WebSocket message each (core.limits):
the queue's first page is the oldest cards that fit, with a count of the rest and a control that
loads the next page (on scroll, or on a click); a card too large for a message shows its start
and a link to the question's own page.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from django.db.models import Q
from django.template.loader import render_to_string

from core.limits import fit, size_of
from projects import access
from questions.models import WITH_DEADLINE, Question, QuestionQuerySet

# A card over this is shown cut down: a page must hold at least one card and the rest of the state.
CARD_MAX_BYTES = 192 * 1024


def encode_cursor(question: Question) -> str:
    """Where a page ended: the last question's time and id, so new questions never shift the pages."""
    return base64.urlsafe_b64encode(f"{question.created_at.isoformat()}|{question.pk}".encode()).decode()


# The cursor of a page that starts at the oldest question without a deadline.
FROM_THE_START = base64.urlsafe_b64encode(
    f"{datetime.min.replace(tzinfo=UTC).isoformat()}|{uuid.UUID(int=0)}".encode()
).decode()


def decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID] | None:
    try:
        created_at, _, pk = base64.urlsafe_b64decode(cursor.encode()).decode().partition("|")
        return datetime.fromisoformat(created_at), uuid.UUID(pk)
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors too
        return None


def card_html(question: Question, *, announce: bool = False, read_only: bool = False) -> str:
    """The card; `read_only`: for a viewer, who sees the question and may not answer it."""
    context = {"question": question, "announce": announce, "read_only": read_only}
    html = render_to_string("questions/card.html#question-card", context)
    if size_of(html) > CARD_MAX_BYTES:
        html = render_to_string("questions/card.html#question-card-too-large", {"question": question})
    return html


@dataclass
class QueuePage:
    cards: list[str] = field(default_factory=list)
    # Pending questions after this page, and where the next page starts (None: this is the last).
    remaining: int = 0
    cursor: str | None = None


def pending_after(
    after: tuple[datetime, uuid.UUID] | None, seen: access.Access = access.EVERYTHING
) -> QuestionQuerySet:
    """The pending questions without a deadline, oldest first, after the cursor (those with one lead the first page)."""
    pending = (
        seen.visible(Question.objects.pending())
        .exclude(WITH_DEADLINE)
        .select_related("session")
        .order_by("created_at", "pk")
    )
    if after is not None:
        created_at, pk = after
        pending = pending.filter(Q(created_at__gt=created_at) | Q(created_at=created_at, pk__gt=pk))
    return pending


def urgent(seen: access.Access = access.EVERYTHING) -> list[Question]:
    """The pending questions someone gives up on at a known time, soonest first (issue 29: triage order)."""
    found = list(
        seen.visible(Question.objects.pending())
        .with_deadline()
        .select_related("session")[: settings.HOOKBRIDGE_QUEUE_PAGE]
    )
    return sorted(found, key=lambda question: (question.deadline, question.created_at))


def page(after: tuple[datetime, uuid.UUID] | None = None, seen: access.Access = access.EVERYTHING) -> QueuePage:
    """The cards that fit in one message: on the first page, those with a deadline (soonest first), then the
    oldest of the rest; after the cursor, the next of the rest.
    """
    leading = urgent(seen) if after is None else []
    pending = pending_after(after, seen)
    candidates = [*leading, *pending[: settings.HOOKBRIDGE_QUEUE_PAGE]]
    looks_only = seen.viewing_ids()
    cards, taken = fit(candidates, lambda question: card_html(question, read_only=question.project_id in looks_only))
    if taken == 0:
        return QueuePage()
    rest_taken = max(taken - len(leading), 0)
    remaining = pending.count() - rest_taken
    if rest_taken == 0:  # the questions with a deadline filled the page: the next starts at the oldest of the rest
        return QueuePage(cards, remaining, FROM_THE_START if remaining > 0 else None)
    return QueuePage(cards, remaining, encode_cursor(candidates[taken - 1]) if remaining > 0 else None)
