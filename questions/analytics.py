"""How long agents wait on people (issue 42): the figures of the Analytics page and its CSV.

Over the questions asked in a window of days, in the projects a person sees: how many were asked, answered,
and expired unanswered, and the time to answer at the median and the 90th percentile, in all, by day, and by
project, person, agent, host and kind. Percentiles are nearest-rank: each is a wait that really happened.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from django import forms
from django.db.models import QuerySet
from django.db.models.fields.json import KT
from django.utils import timezone

from questions import kinds
from questions.models import CancelReason, Question, Status

WINDOWS = [(7, "the last 7 days"), (30, "the last 30 days"), (90, "the last 90 days"), (365, "the last year")]
# What a page with no window asked for shows, and its picker says (issue 55: it said 7 days and showed 30).
DEFAULT_DAYS = 30
# The breakdowns, in the order the page shows them: (key, heading).
BREAKDOWNS = [("project", "Project"), ("person", "Person"), ("agent", "Agent"), ("host", "Host"), ("kind", "Kind")]
# An approval asked through MCP rather than a host's hook has no host title: the host column says so.
OVER_MCP = "over MCP"


class AnalyticsForm(forms.Form):
    days = forms.TypedChoiceField(
        choices=[(str(days), label) for days, label in WINDOWS], coerce=int, required=False, label="Asked in"
    )

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        # Unasked, the window is the default one, and bound as such: the picker shows the window the page does.
        given = dict(data.items()) if data is not None else {}
        if not given.get("days"):
            given["days"] = str(DEFAULT_DAYS)
        super().__init__(given)

    def clean_days(self) -> int:
        days = self.cleaned_data["days"]
        return days if isinstance(days, int) else DEFAULT_DAYS


def nearest_rank(sorted_waits: list[float], share: float) -> float | None:
    if not sorted_waits:
        return None
    return sorted_waits[max(0, math.ceil(share * len(sorted_waits)) - 1)]


@dataclass
class Figures:
    """One row: a breakdown's value (or a day, or the whole window) and its counts and waits."""

    label: str
    asked: int = 0
    answered: int = 0
    expired: int = 0
    dismissed: int = 0
    withdrawn: int = 0  # ended without an answer otherwise: its agent or host stopped waiting, or cancelled it
    waits: list[float] = field(default_factory=list)

    @property
    def p50(self) -> float | None:
        return nearest_rank(sorted(self.waits), 0.5)

    @property
    def p90(self) -> float | None:
        return nearest_rank(sorted(self.waits), 0.9)

    def count(self, row: Mapping[str, Any], *, asked: bool = True) -> None:
        self.asked += asked
        if row["status"] == Status.ANSWERED and row["resolved_at"] is not None:
            self.answered += 1
            self.waits.append((row["resolved_at"] - row["created_at"]).total_seconds())
        elif row["status"] == Status.TIMED_OUT:
            self.expired += 1
        elif row["status"] == Status.CANCELLED and row["cancel_reason"] == CancelReason.DISMISSED:
            self.dismissed += 1
        elif row["status"] == Status.CANCELLED:
            self.withdrawn += 1


@dataclass
class Report:
    days: int
    since: date
    total: Figures
    by_day: list[Figures]
    breakdowns: list[tuple[str, str, list[Figures]]]

    def chart(self, width: int = 720, height: int = 180) -> dict[str, Any]:
        """The by-day bars as SVG coordinates: asked behind, answered in front, each day one slot."""
        top = max([day.asked for day in self.by_day] + [1])
        slot = width / max(len(self.by_day), 1)
        bars = []
        for i, day in enumerate(self.by_day):
            asked_h, answered_h = height * day.asked / top, height * day.answered / top
            bars.append(
                {
                    "day": day,
                    "x": round(i * slot + slot * 0.1, 2),
                    "w": round(slot * 0.8, 2),
                    "asked_y": round(height - asked_h, 2),
                    "asked_h": round(asked_h, 2),
                    "answered_y": round(height - answered_h, 2),
                    "answered_h": round(answered_h, 2),
                }
            )
        return {"width": width, "height": height, "top": top, "bars": bars}

    @property
    def window(self) -> str:
        """The window in the picker's words: "the last 30 days"."""
        return dict(WINDOWS).get(self.days, f"the last {self.days} days")


def _rows(questions: QuerySet[Question]) -> Iterable[Mapping[str, Any]]:
    return (
        questions.annotate(host=KT("payload__host_title"))
        .values(
            "created_at",
            "resolved_at",
            "status",
            "cancel_reason",
            "kind",
            "asker_name",
            "host",
            "project__name",
            "answer__answered_by",
        )
        .iterator(chunk_size=2000)
    )


def report(questions: QuerySet[Question], days: int, *, today: date | None = None) -> Report:
    """The figures of the questions in `questions` (already cut to what the person sees) asked in the last
    `days` days, today included, by the server's time zone."""
    today = today or timezone.localdate()
    since = today - timedelta(days=days - 1)
    start = timezone.make_aware(datetime.combine(since, time.min))
    total = Figures("All")
    by_day = {since + timedelta(days=i): Figures((since + timedelta(days=i)).isoformat()) for i in range(days)}
    groups: dict[str, dict[str, Figures]] = {key: {} for key, _ in BREAKDOWNS}
    labels = dict(kinds.choices())  # the dashboard's words for each kind, not its stored name
    for row in _rows(questions.filter(created_at__gte=start)):
        total.count(row)
        day = timezone.localtime(row["created_at"]).date()
        if day in by_day:
            by_day[day].count(row)
        values = {
            "project": row["project__name"] or "(none)",
            "agent": row["asker_name"],
            "host": row["host"] or OVER_MCP,
            "kind": labels.get(row["kind"], row["kind"]),
        }
        for key, value in values.items():
            groups[key].setdefault(value, Figures(value)).count(row)
        if row["answer__answered_by"]:
            # A person answers; they ask nothing, so only their answers count.
            person = row["answer__answered_by"]
            groups["person"].setdefault(person, Figures(person)).count(row, asked=False)
    breakdowns = [
        (key, heading, sorted(groups[key].values(), key=lambda f: (-max(f.asked, f.answered), f.label)))
        for key, heading in BREAKDOWNS
    ]
    return Report(days=days, since=since, total=total, by_day=list(by_day.values()), breakdowns=breakdowns)


def as_csv(figures: Report) -> str:
    """Every row of the page: the whole window, each day, each breakdown's values; waits in seconds."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        ["breakdown", "value", "asked", "answered", "expired_unanswered", "dismissed", "withdrawn", "p50_seconds",
         "p90_seconds"]
    )  # fmt: skip

    def write(breakdown: str, row: Figures, asked: bool = True) -> None:
        seconds = ["" if s is None else f"{s:.1f}" for s in (row.p50, row.p90)]
        ended = [row.expired, row.dismissed, row.withdrawn] if asked else ["", "", ""]
        writer.writerow([breakdown, row.label, row.asked if asked else "", row.answered, *ended, *seconds])

    write("all", figures.total)
    for day in figures.by_day:
        write("day", day)
    for key, _, rows in figures.breakdowns:
        for row in rows:
            write(key, row, asked=key != "person")
    return out.getvalue()
