"""How a waiting question ends, or its agent's presence changes: one table, applied by one conditional update.

Each row says from which rows an ending may move a question (the UPDATE's WHERE: whoever gets there first wins,
an answer included), to which status, which fields the caller gives, and which signal tells the pages and the
waiting call once it is committed. `Question`'s methods (dismiss, cancel, abort, host_stopped_waiting,
agent_stopped_waiting, agent_waiting_again, time_out, expire_abandoned) are calls of `apply`; docs/architecture.md
shows the same table, and a test holds the two together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import models, transaction
from django.dispatch import Signal
from django.utils import timezone

from core.signals import send_on_commit
from questions import signals
from questions.states import CancelReason, Status

PENDING = models.Q(status=Status.PENDING)
LEFT = models.Q(agent_left_at__isnull=False)
# Well under SQLite's limit on the parameters of one statement: a worker stopping with 2,000 calls held.
PER_UPDATE = 500


@dataclass(frozen=True)
class Ending:
    name: str
    among: models.Q  # the rows it may change
    status: str | None  # the status it moves them to; None: they stay pending (only the agent's presence changes)
    reason: str = ""  # the cancel reason it records ("": none)
    sets: tuple[str, ...] = ()  # the fields the caller gives values for
    clears_left: bool = False  # forgets that the agent stopped waiting
    signal: Signal = signals.question_resolved
    what: str = ""  # when it happens, in words

    def __str__(self) -> str:
        return self.name


LEFT_FIELDS = ("agent_left_at", "agent_left_reason")

DISMISSED = Ending(
    "dismissed",
    PENDING,
    Status.CANCELLED,
    CancelReason.DISMISSED,
    ("dismissed_by",),
    what="a person declines to answer; the agent goes on by its own judgement",
)
CANCELLED = Ending(
    "cancelled",
    PENDING,
    Status.CANCELLED,
    "",
    ("cancel_reason",),
    what="withdrawn by the server (the call's task cancelled, a person left the team, …): the reason is the caller's",
)
ABORTED = Ending(
    "aborted",
    PENDING,
    Status.CANCELLED,
    CancelReason.CLIENT_CANCELLED,
    LEFT_FIELDS,
    what="the person at the agent aborted the call (Esc); a re-ask within the re-attach window comes back to it",
)
HOST_DECIDED = Ending(
    "host decided",
    PENDING,
    Status.CANCELLED,
    CancelReason.HOST_DECIDED,
    LEFT_FIELDS,
    what="an approval's host closed its request: decided at its own prompt, Esc, its hook's timeout",
)
SERVER_CUT = Ending(
    "server cut",
    PENDING,
    Status.CANCELLED,
    CancelReason.SERVER_RESTARTED,
    LEFT_FIELDS,
    what="the server stopped while an approval's host waited: nobody decided, and the record says so",
)
AGENT_LEFT = Ending(
    "agent left",
    PENDING & ~LEFT,
    None,
    sets=LEFT_FIELDS,
    signal=signals.agent_presence_changed,
    what="the agent's call ended without an outcome (its timeout, a dropped connection): still answerable",
)
AGENT_BACK = Ending(
    "agent back",
    PENDING & LEFT,
    None,
    clears_left=True,
    signal=signals.agent_presence_changed,
    what="a call waits on it again (a re-ask, wait_for_answer, a task's poll)",
)
AGENT_GONE = Ending(
    "agent gone",
    PENDING & LEFT,
    Status.CANCELLED,
    CancelReason.AGENT_GONE,
    what="its agent stopped waiting longer than the re-attach window ago (the caller names the cut-off)",
)
TIMED_OUT = Ending(
    "timed out",
    PENDING,
    Status.TIMED_OUT,
    what="nobody decided in time, and no approval policy's fallback decided for them",
)

ENDINGS: tuple[Ending, ...] = (
    DISMISSED,
    CANCELLED,
    ABORTED,
    HOST_DECIDED,
    SERVER_CUT,
    AGENT_LEFT,
    AGENT_BACK,
    AGENT_GONE,
    TIMED_OUT,
)


def apply(rows: models.QuerySet[Any], ids: Sequence[Any], ending: Ending, **values: Any) -> int:
    """Move the questions `ids` (of `rows`, narrowed as the caller needs) by `ending`; how many it moved.

    One conditional UPDATE per 500 ids, in one transaction, so the signal is sent once and only when the change
    is visible to whoever re-reads: for one question, the ending's own; for several, that the queue changed.
    """
    missing = set(ending.sets) - set(values)
    extra = set(values) - set(ending.sets)
    if missing or extra:
        raise TypeError(f"{ending}: give {', '.join(ending.sets) or 'nothing'} (got {', '.join(values) or 'nothing'})")
    if ending.status is not None and len(ids) != 1:
        raise ValueError(f"{ending}: a question ends one at a time (its wake-up names it)")
    changes: dict[str, Any] = dict(values)
    if "agent_left_reason" in changes:
        changes["agent_left_reason"] = str(changes["agent_left_reason"])[:300]
    if ending.status is not None:
        changes.update(status=ending.status, resolved_at=timezone.now())
    if ending.reason:
        changes["cancel_reason"] = ending.reason
    if ending.clears_left:
        changes.update(agent_left_at=None, agent_left_reason="")
    # Atomic so the wake-up (or the pages' telling) is only sent once the change is visible to the re-read.
    with transaction.atomic():
        moved = 0
        for start in range(0, len(ids), PER_UPDATE):
            chunk = list(ids[start : start + PER_UPDATE])
            moved += rows.filter(ending.among, pk__in=chunk).update(**changes)
        if moved and len(ids) == 1:
            send_on_commit(ending.signal, rows.model, question_id=ids[0])
        elif moved:
            send_on_commit(signals.questions_changed, rows.model)
    return moved


def as_markdown() -> str:
    """The table as docs/architecture.md shows it (a test holds the two together)."""
    names = {signal: name for name, signal in vars(signals).items() if isinstance(signal, Signal)}
    rows = [
        "| ending | from | to | cancel reason | fields it sets | signal | when |",
        "|---|---|---|---|---|---|---|",
    ]
    for ending in ENDINGS:
        among = {PENDING & LEFT: "pending, its agent stopped waiting", PENDING & ~LEFT: "pending, its agent waiting"}
        sets = [f"`{field}`" for field in ending.sets]
        sets += ["`agent_left_at = null`", "`agent_left_reason = ''`"] if ending.clears_left else []
        reason = ending.reason or ("the caller's" if "cancel_reason" in ending.sets else "—")
        rows.append(
            f"| {ending.name} | {among.get(ending.among, 'pending')} | {ending.status or 'pending (stays)'} | "
            f"{reason} | {', '.join(sets) or '—'} | `{names[ending.signal]}` | {ending.what} |"
        )
    return "\n".join(rows)
