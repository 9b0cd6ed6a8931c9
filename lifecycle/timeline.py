"""A session's run drawn as an SVG on the server: no charting library in the browser.

Lanes, top to bottom: phases and plans as bars from start to completion,
progress as a line, questions as markers as wide as the agent waited for a
person, errors in red. Ticks are spaced to suit the run's length, so a run of a
few minutes and one of several hours both read well.

Read in two seconds (issue 29): the axis spans the agent's activity, not the
time since (a phase or a wait still open is drawn as an arrow past the last
activity, towards "now"); a bar's name is written in it only where it fits,
else its number, and the legend under the picture names every bar, so no two
labels ever overlap.
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

WIDTH, LEFT, RIGHT = 900, 96, 48
# What one character of the 13 px labels takes, a little more than system-ui's average: a label is
# written only where it fits with this, so an estimate on the wide side never lets two labels touch.
CHAR = 7.4
ARROW = 12  # how far past the last activity an open bar's arrow reaches
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
    number: str = ""  # "1", "2" for phases, "P1" for plans: what the bar shows when its name does not fit
    ongoing: bool = False  # neither completed nor followed by another: it still goes on, to now

    def lasted(self, now: datetime) -> str:
        return duration(((now if self.ongoing else self.end) - self.start).total_seconds())


def fits(text: str, width: float) -> bool:
    """Whether `text` fits in `width` of the drawing, with 4 px either side."""
    return len(text) * CHAR + 8 <= width


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


def _spans(lifecycle: list[Any], end: datetime) -> list[Span]:
    """Pair each phase/plan start with its completion (or the next start, or the end of the run)."""
    pairs = {
        EventType.PHASE_STARTED: (EventType.PHASE_COMPLETED, "phase"),
        EventType.PLAN_STARTED: (EventType.PLAN_COMPLETED, "plan"),
    }
    spans: list[Span] = []
    open_spans: dict[str, Span] = {}
    for event in lifecycle:
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
    for span in open_spans.values():
        span.ongoing = True
    for kind, prefix in (("phase", ""), ("plan", "P")):
        for n, span in enumerate((span for span in spans if span.kind == kind), start=1):
            span.number = f"{prefix}{n}"
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
    arrow: str = ""  # an open bar's arrow past the last activity: the polygon's points


def _f(value: float) -> str:
    return f"{value:.1f}"


class _Scale:
    """Time to x, and the lanes' tops, for one run."""

    def __init__(
        self, start: datetime, end: datetime, lanes: list[tuple[str, str]], heights: Mapping[str, float]
    ) -> None:
        self.start, self.seconds = start, max((end - start).total_seconds(), 1.0)
        self.end = start + timedelta(seconds=self.seconds)
        self.plot = WIDTH - LEFT - RIGHT - ARROW  # room past the end for an open bar's arrow
        self.top: dict[str, float] = {}
        y = 8.0
        for key, _ in lanes:
            self.top[key] = y
            y += heights.get(key, LANE) + GAP
        self.axis_y = y + 4
        self.height = self.axis_y + 28

    def x(self, moment: datetime) -> float:
        return LEFT + self.plot * max(0.0, (moment - self.start).total_seconds()) / self.seconds


def _arrow(x: float, y: float, height: float) -> str:
    """A triangle from the bar's end at x, pointing right: it is still going on."""
    mid = y + height / 2
    return f"{x:.1f},{y:.1f} {x + ARROW:.1f},{mid:.1f} {x:.1f},{y + height:.1f}"


def _span_marks(spans: list[Span], scale: _Scale, now: datetime) -> list[Mark]:
    marks = []
    for span in spans:
        x0, x1 = scale.x(span.start), scale.x(span.end)
        width = max(x1 - x0, 2.0)
        tip = f"{span.number} {span.label}: {span.lasted(now)} from {_clock(span.start)}"
        tip += "" if span.done else ", not completed"
        # The name where it fits, else the bar's number (the legend names it), else nothing: never past the bar.
        label = span.label if fits(span.label, width) else span.number if fits(span.number, width) else ""
        top = scale.top[span.kind]
        marks.append(
            Mark(
                css=f"{span.kind} {'completed' if span.done else 'open' if span.ongoing else 'ended'}",
                x=_f(x0),
                y=_f(top),
                width=_f(width),
                height=str(LANE - 4),
                tip=tip,
                label=label,
                label_x=_f(x0 + 4),
                label_y=_f(top + 13),
                data=span.label,
                arrow=_arrow(x0 + width, top, LANE - 4) if span.ongoing else "",
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
        waited = ((question.resolved_at or now) - question.created_at).total_seconds()
        x0 = scale.x(question.created_at)
        if question.resolved_at:
            tip = f"Asked at {_clock(question.created_at)}, waited {duration(waited)} for a person"
        else:
            tip = f"Asked at {_clock(question.created_at)}, waiting for a person for {duration(waited)} so far"
        tip += f": {question.text[:80]} ({question.get_status_display().lower()})"
        # Questions open at the same time each get a row of their own, so none hides another.
        row_y = scale.top["question"] + rows[question.pk] * QUESTION_ROW
        # A wait still open runs to the last activity and points on: it does not stretch the axis to now.
        width = max(scale.x(question.resolved_at or scale.end) - x0, 3.0)
        arrow = "" if question.resolved_at else _arrow(x0 + width, row_y, QUESTION_ROW - 3)
        css = f"question {question.status}{'' if question.resolved_at else ' open'}"
        marks.append(
            Mark(css, _f(x0), _f(row_y), _f(width), str(QUESTION_ROW - 3), tip, data=f"{waited:.0f}", arrow=arrow)
        )
    return marks


def _error_marks(events: list[Any], scale: _Scale) -> list[Mark]:
    marks = []
    for event in events:
        if event.type == SessionEventType.ERROR:
            kind = "Error (recoverable)" if event.data.get("recoverable") else "Error"
            tip = f"{kind} at {_clock(event.created_at)}: {event.data['error'][:120]}"
            marks.append(Mark("error", _f(scale.x(event.created_at)), _f(scale.top["error"] + 9), tip=tip))
    return marks


def _ticks(scale: _Scale, now_label: str) -> list[Mark]:
    """The axis's labels, spaced to the run's length; "now" at its right end when the run went quiet since."""
    step = next((s for s in TICK_STEPS if scale.seconds / s <= 8), TICK_STEPS[-1])
    ticks = []
    tick = 0
    # "now" ends at the drawing's edge; a tick label whose box would reach it gives way.
    now_left = WIDTH - 2 - len(now_label) * CHAR if now_label else float(WIDTH)
    while tick <= scale.seconds:
        label = "start" if tick == 0 else f"+{duration(tick)}"
        x = scale.x(scale.start + timedelta(seconds=tick))
        if x + len(label) * CHAR / 2 + 6 < now_left:
            ticks.append(Mark("tick", _f(x), "", label=label))
        tick += step
    if now_label:
        ticks.append(Mark("tick now", str(WIDTH - 2), "", label=now_label))
    return ticks


def _last_activity(session: AgentSession, lifecycle: list[Any], events: list[Any], questions: list[Any]) -> datetime:
    """The last moment anything happened in the run: the axis ends here, however long ago that was."""
    moments = [session.created_at]
    moments += [event.created_at for event in lifecycle] + [event.created_at for event in events]
    moments += [question.created_at for question in questions]
    moments += [question.resolved_at for question in questions if question.resolved_at]
    return max(moments)


def legend(spans: list[Span], now: datetime) -> list[dict[str, str]]:
    """The phases and plans by number and name, as the picture's legend (and its text for screen readers)."""
    return [
        {
            "number": span.number,
            "kind": span.kind,
            "label": span.label,
            "lasted": span.lasted(now),
            "state": "completed" if span.done else "going on" if span.ongoing else "not completed",
        }
        for span in spans
    ]


def layout(session: AgentSession, now: datetime | None = None) -> dict[str, Any]:
    """Where everything goes, for templates/lifecycle/timeline.html."""
    now = now or timezone.now()
    events = list(session.events.order_by("created_at", "id"))
    lifecycle = list(session.lifecycle_events.order_by("created_at", "id"))
    questions = list(session.questions.order_by("created_at"))
    last = _last_activity(session, lifecycle, events, questions)
    end = max(session.completed_at or session.closed_at or last, last)
    # The run went quiet a while ago and is still open (a wait, an unfinished phase): say how long.
    quiet = (now - end).total_seconds()
    finished = session.completed_at is not None or session.closed_at is not None
    now_label = "" if finished or quiet < 1 else f"now, +{duration(quiet)}"
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
    spans = _spans(lifecycle, end)
    return {
        "width": WIDTH,
        "height": f"{scale.height:.0f}",
        "length": duration(scale.seconds),
        "lanes": [Mark("lane", str(LEFT - 8), _f(scale.top[key] + 15), label=title) for key, title in lanes],
        "spans": _span_marks(spans, scale, now),
        "legend": legend(spans, now),
        "tools": _tool_marks(tool_uses, scale),
        "progress_points": points,
        "progress": progress,
        # The progress lane's scale, at its right edge; anchored at its end so "100%" is never cut by the edge.
        "scale": [
            Mark("scale-label", str(WIDTH - 2), _f(scale.top["progress"] + 10), label="100%"),
            Mark("scale-label", str(WIDTH - 2), _f(scale.top["progress"] + heights["progress"]), label="0%"),
        ],
        "questions": _question_marks(questions, rows, scale, now),
        "waiting": any(question.resolved_at is None for question in questions),
        "errors": _error_marks(events, scale),
        "error_top": _f(scale.top["phase"]),
        "axis": {
            "x1": LEFT,
            "x2": WIDTH - RIGHT,
            "y": _f(scale.axis_y),
            "tick_end": _f(scale.axis_y + 5),
            "label_y": _f(scale.axis_y + 18),
        },
        "ticks": _ticks(scale, now_label),
    }


def render(session: AgentSession, now: datetime | None = None) -> SafeString:
    """The run as an SVG: the numbers from `layout`, the markup autoescaped by templates/lifecycle/timeline.html."""
    return mark_safe(render_to_string("lifecycle/timeline.html#svg", layout(session, now)).strip())


def render_with_legend(session: AgentSession, now: datetime | None = None) -> SafeString:
    """The SVG in its scrolling region, and under it the legend that names every bar."""
    return mark_safe(render_to_string("lifecycle/timeline.html", layout(session, now)).strip())
