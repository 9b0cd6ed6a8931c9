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
from datetime import datetime

from django.conf import settings
from django.db.models import Q
from django.template.loader import render_to_string

from core.limits import fit, size_of
from questions.models import Question, QuestionQuerySet

# A card over this is shown cut down: a page must hold at least one card and the rest of the state.
CARD_MAX_BYTES = 192 * 1024


def encode_cursor(question: Question) -> str:
    """Where a page ended: the last question's time and id, so new questions never shift the pages."""
    return base64.urlsafe_b64encode(f"{question.created_at.isoformat()}|{question.pk}".encode()).decode()


def decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID] | None:
    try:
        created_at, _, pk = base64.urlsafe_b64decode(cursor.encode()).decode().partition("|")
        return datetime.fromisoformat(created_at), uuid.UUID(pk)
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors too
        return None


def card_html(question: Question, *, announce: bool = False) -> str:
    html = render_to_string("questions/card.html#question-card", {"question": question, "announce": announce})
    if size_of(html) > CARD_MAX_BYTES:
        html = render_to_string("questions/card.html#question-card-too-large", {"question": question})
    return html


@dataclass
class QueuePage:
    cards: list[str] = field(default_factory=list)
    # Pending questions after this page, and where the next page starts (None: this is the last).
    remaining: int = 0
    cursor: str | None = None


def pending_after(after: tuple[datetime, uuid.UUID] | None) -> QuestionQuerySet:
    pending = Question.objects.pending().select_related("session").order_by("created_at", "pk")
    if after is not None:
        created_at, pk = after
        pending = pending.filter(Q(created_at__gt=created_at) | Q(created_at=created_at, pk__gt=pk))
    return pending


def page(after: tuple[datetime, uuid.UUID] | None = None, *, total: int | None = None) -> QueuePage:
    """The oldest pending questions (after the cursor) that fit in one message, as rendered cards.

    `total`: how many are pending after the cursor, when the caller counted them already.
    """
    pending = pending_after(after)
    candidates = list(pending[: settings.HOOKBRIDGE_QUEUE_PAGE])
    cards, taken = fit(candidates, card_html)
    if taken == 0:
        return QueuePage()
    remaining = (pending.count() if total is None else total) - taken
    return QueuePage(cards, remaining, encode_cursor(candidates[taken - 1]) if remaining > 0 else None)
