"""A session's run drawn as an SVG on the server: no charting library in the browser.

Lanes, top to bottom: phases and plans as bars from start to completion,
progress as a line, questions as markers as wide as the agent waited for a
person, errors in red. Ticks are spaced to suit the run's length, so a run of a
few minutes and one of several hours both read well.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from core.formatting import duration
from lifecycle.models import AgentSession, EventType, SessionEventType

WIDTH, LEFT, RIGHT = 900, 96, 40
LANE, GAP = 22, 6
QUESTION_ROW = 12
TICK_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400]


@dataclass
class Span:
    kind: str  # "phase" or "plan"
    label: str
    start: datetime
    end: datetime
    done: bool


def _clock(moment: datetime) -> str:
    return timezone.localtime(moment).strftime("%H:%M:%S")


def _question_rows(questions: list[Any], now: datetime) -> dict[Any, int]:
    """A row for each question: the first whose last question ended before this one was asked."""
    rows: dict[Any, int] = {}
    ends: list[datetime] = []
    for question in questions:  # in asking order
        until = question.resolved_at or now
        row = next((i for i, end in enumerate(ends) if end <= question.created_at), len(ends))
        if row == len(ends):
            ends.append(until)
        else:
            ends[row] = until
        rows[question.pk] = row
    return rows


def _spans(session: AgentSession, end: datetime) -> list[Span]:
    """Pair each phase/plan start with its completion (or the next start, or the end of the run)."""
    pairs = {
        EventType.PHASE_STARTED: (EventType.PHASE_COMPLETED, "phase"),
        EventType.PLAN_STARTED: (EventType.PLAN_COMPLETED, "plan"),
    }
    spans: list[Span] = []
    open_spans: dict[str, Span] = {}
    for event in session.lifecycle_events.order_by("created_at", "id"):
        label = (
            " ".join(part for part in (event.phase_number, event.phase_name) if part) or event.get_event_type_display()
        )
        if event.event_type in pairs:
            _, kind = pairs[EventType(event.event_type)]
            previous = open_spans.pop(kind, None)
            if previous is not None:
                previous.end = event.created_at
            span = Span(kind, label, event.created_at, end, done=False)
            spans.append(span)
            open_spans[kind] = span
        else:
            kind = "phase" if event.event_type == EventType.PHASE_COMPLETED else "plan"
            if event.event_type in (EventType.PHASE_COMPLETED, EventType.PLAN_COMPLETED) and kind in open_spans:
                span = open_spans.pop(kind)
                span.end, span.done = event.created_at, True
    return spans


@dataclass(frozen=True)
class Mark:
    """One drawn shape, its numbers already formatted: the template only places them (autoescaped)."""

    css: str
    x: str
    y: str
    width: str = ""
    height: str = ""
    tip: str = ""
    label: str = ""
    label_x: str = ""
    label_y: str = ""
    data: str = ""  # a span's label (data-label), a question's wait in seconds (data-wait-seconds)


def _f(value: float) -> str:
    return f"{value:.1f}"


class _Scale:
    """Time to x, and the lanes' tops, for one run."""

    def __init__(
        self, start: datetime, end: datetime, lanes: list[tuple[str, str]], heights: Mapping[str, float]
    ) -> None:
        self.start, self.seconds = start, max((end - start).total_seconds(), 1.0)
        self.plot = WIDTH - LEFT - RIGHT
        self.top: dict[str, float] = {}
        y = 8.0
        for key, _ in lanes:
            self.top[key] = y
            y += heights.get(key, LANE) + GAP
        self.axis_y = y + 4
        self.height = self.axis_y + 28

    def x(self, moment: datetime) -> float:
        return LEFT + self.plot * max(0.0, (moment - self.start).total_seconds()) / self.seconds


def _span_marks(spans: list[Span], scale: _Scale) -> list[Mark]:
    marks = []
    for span in spans:
        x0, x1 = scale.x(span.start), scale.x(span.end)
        width = max(x1 - x0, 2.0)
        lasted = duration((span.end - span.start).total_seconds())
        tip = f"{span.label}: {lasted} from {_clock(span.start)}" + ("" if span.done else ", not completed")
        marks.append(
            Mark(
                css=f"{span.kind} {'completed' if span.done else 'open'}",
                x=_f(x0),
                y=_f(scale.top[span.kind]),
                width=_f(width),
                height=str(LANE - 4),
                tip=tip,
                label=span.label[:40] if width > 40 else "",
                label_x=_f(x0 + 4),
                label_y=_f(scale.top[span.kind] + 13),
                data=span.label,
            )
        )
    return marks


def _tool_marks(tool_uses: list[Any], scale: _Scale) -> list[Mark]:
    marks = []
    for use in tool_uses:
        took = float(use.data.get("durationMs") or 0) / 1000
        x1 = scale.x(use.created_at)
        x0 = min(scale.x(use.created_at - timedelta(seconds=took)), x1)
        tip = f"{use.data.get('summary', '')}: {duration(took, tenths=True)}, {use.data.get('outcome', '')}"
        css = f"tool {use.data.get('outcome', '')}"
        marks.append(Mark(css, _f(x0), _f(scale.top["tool"]), _f(max(x1 - x0, 2.0)), str(LANE - 4), tip))
    return marks


def _progress_marks(progress: list[Any], scale: _Scale, lane_height: float) -> tuple[str, list[Mark]]:
    base = scale.top["progress"] + lane_height
    points = []
    marks = []
    for event in progress:
        cy = base - lane_height * event.data["percent"] / 100
        points.append(f"{scale.x(event.created_at):.1f},{cy:.1f}")
        tip = f"{event.data['percent']}% at {_clock(event.created_at)}"
        marks.append(Mark("progress-point", _f(scale.x(event.created_at)), _f(cy), tip=tip))
    return " ".join(points), marks


def _question_marks(questions: list[Any], rows: dict[Any, int], scale: _Scale, now: datetime) -> list[Mark]:
    marks = []
    for question in questions:
        until = question.resolved_at or now
        waited = (until - question.created_at).total_seconds()
        x0 = scale.x(question.created_at)
        tip = (
            f"Asked at {_clock(question.created_at)}, waited {duration(waited)} for a person: {question.text[:80]} "
            f"({question.get_status_display().lower()})"
        )
        # Questions open at the same time each get a row of their own, so none hides another.
        row_y = scale.top["question"] + rows[question.pk] * QUESTION_ROW
        width = max(scale.x(until) - x0, 3.0)
        css = f"question {question.status}"
        marks.append(Mark(css, _f(x0), _f(row_y), _f(width), str(QUESTION_ROW - 3), tip, data=f"{waited:.0f}"))
    return marks


def _error_marks(events: list[Any], scale: _Scale) -> list[Mark]:
    marks = []
    for event in events:
        if event.type == SessionEventType.ERROR:
            kind = "Error (recoverable)" if event.data.get("recoverable") else "Error"
            tip = f"{kind} at {_clock(event.created_at)}: {event.data['error'][:120]}"
            marks.append(Mark("error", _f(scale.x(event.created_at)), _f(scale.top["error"] + 9), tip=tip))
    return marks


def _ticks(scale: _Scale) -> list[Mark]:
    step = next((s for s in TICK_STEPS if scale.seconds / s <= 8), TICK_STEPS[-1])
    ticks = []
    tick = 0
    while tick <= scale.seconds:
        label = "start" if tick == 0 else f"+{duration(tick)}"
        ticks.append(Mark("tick", _f(scale.x(scale.start + timedelta(seconds=tick))), "", label=label))
        tick += step
    return ticks


def layout(session: AgentSession, now: datetime | None = None) -> dict[str, Any]:
    """Where everything goes, for templates/lifecycle/timeline.html."""
    now = now or timezone.now()
    end = session.completed_at or session.closed_at or now
    events = list(session.events.order_by("created_at", "id"))
    questions = list(session.questions.order_by("created_at"))
    for moment in [e.created_at for e in events] + [q.resolved_at or q.created_at for q in questions]:
        end = max(end, moment)
    rows = _question_rows(questions, now)
    # Tool uses an agent host reported through its hooks, as bars as long as each one ran.
    tool_uses = [e for e in events if e.type == SessionEventType.TOOL and e.data.get("hook") == "PostToolUse"]
    lanes = [
        ("phase", "Phases"),
        ("plan", "Plans"),
        *([("tool", "Tools")] if tool_uses else []),
        ("progress", "Progress"),
        ("question", "Questions"),
        ("error", "Errors"),
    ]
    heights = {"progress": 3 * LANE, "question": max(LANE, len(set(rows.values())) * QUESTION_ROW + 4)}
    scale = _Scale(session.created_at, end, lanes, heights)
    points, progress = _progress_marks(
        [e for e in events if e.type == SessionEventType.PROGRESS], scale, heights["progress"]
    )
    return {
        "width": WIDTH,
        "height": f"{scale.height:.0f}",
        "length": duration(scale.seconds),
        "lanes": [Mark("lane", str(LEFT - 8), _f(scale.top[key] + 15), label=title) for key, title in lanes],
        "spans": _span_marks(_spans(session, end), scale),
        "tools": _tool_marks(tool_uses, scale),
        "progress_points": points,
        "progress": progress,
        # The progress lane's scale, at its right edge; anchored at its end so "100%" is never cut by the edge.
        "scale": [
            Mark("scale-label", str(WIDTH - 2), _f(scale.top["progress"] + 10), label="100%"),
            Mark("scale-label", str(WIDTH - 2), _f(scale.top["progress"] + heights["progress"]), label="0%"),
        ],
        "questions": _question_marks(questions, rows, scale, now),
        "errors": _error_marks(events, scale),
        "error_top": _f(scale.top["phase"]),
        "axis": {
            "x1": LEFT,
            "x2": WIDTH - RIGHT,
            "y": _f(scale.axis_y),
            "tick_end": _f(scale.axis_y + 5),
            "label_y": _f(scale.axis_y + 18),
        },
        "ticks": _ticks(scale),
    }


def render(session: AgentSession, now: datetime | None = None) -> SafeString:
    """The run as an SVG: the numbers from `layout`, the markup autoescaped by templates/lifecycle/timeline.html."""
    return mark_safe(render_to_string("lifecycle/timeline.html", layout(session, now)).strip())
