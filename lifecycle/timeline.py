"""A session's run drawn as an SVG on the server: no charting library in the browser.

Lanes, top to bottom: phases and plans as bars from start to completion,
progress as a line, questions as markers as wide as the agent waited for a
person, errors in red. Ticks are spaced to suit the run's length, so a run of a
few minutes and one of several hours both read well.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from xml.sax.saxutils import escape, quoteattr

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


def render(session: AgentSession, now: datetime | None = None) -> SafeString:
    now = now or timezone.now()
    start = session.created_at
    end = session.completed_at or session.closed_at or now
    events = list(session.events.order_by("created_at", "id"))
    questions = list(session.questions.order_by("created_at"))
    for moment in [e.created_at for e in events] + [q.resolved_at or q.created_at for q in questions]:
        end = max(end, moment)
    span_seconds = max((end - start).total_seconds(), 1.0)
    plot = WIDTH - LEFT - RIGHT

    def x(moment: datetime) -> float:
        return LEFT + plot * max(0.0, (moment - start).total_seconds()) / span_seconds

    spans = _spans(session, end)
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
    top: dict[str, float] = {}
    y = 8.0
    for key, _ in lanes:
        top[key] = y
        y += heights.get(key, LANE) + GAP
    axis_y = y + 4
    height = axis_y + 28

    parts: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 {WIDTH} {height:.0f}" '
        f'role="img" aria-label="Timeline of the run, {escape(duration(span_seconds))} long">'
    ]
    for key, title in lanes:
        parts.append(f'<text class="lane" x="{LEFT - 8}" y="{top[key] + 15:.1f}" text-anchor="end">{title}</text>')

    for span in spans:
        x0, x1 = x(span.start), x(span.end)
        width = max(x1 - x0, 2.0)
        state = "completed" if span.done else "open"
        lasted = duration((span.end - span.start).total_seconds())
        tip = f"{span.label}: {lasted} from {_clock(span.start)}" + ("" if span.done else ", not completed")
        parts.append(
            f'<g class="{span.kind} {state}" data-label={quoteattr(span.label)}>'
            f'<rect x="{x0:.1f}" y="{top[span.kind]:.1f}" width="{width:.1f}" height="{LANE - 4}" rx="3">'
            f"<title>{escape(tip)}</title></rect>"
        )
        if width > 40:
            label_y = top[span.kind] + 13
            parts.append(f'<text x="{x0 + 4:.1f}" y="{label_y:.1f}" class="bar-label">{escape(span.label[:40])}</text>')
        parts.append("</g>")

    for use in tool_uses:
        took = float(use.data.get("durationMs") or 0) / 1000
        x1 = x(use.created_at)
        x0 = min(x(use.created_at - timedelta(seconds=took)), x1)
        tip = f"{use.data.get('summary', '')}: {duration(took, tenths=True)}, {use.data.get('outcome', '')}"
        parts.append(
            f'<rect class="tool {escape(str(use.data.get("outcome", "")))}" x="{x0:.1f}" y="{top["tool"]:.1f}" '
            f'width="{max(x1 - x0, 2.0):.1f}" height="{LANE - 4}" rx="2"><title>{escape(tip)}</title></rect>'
        )

    progress = [e for e in events if e.type == SessionEventType.PROGRESS]
    base = top["progress"] + heights["progress"]
    if progress:
        points = " ".join(
            f"{x(e.created_at):.1f},{base - heights['progress'] * e.data['percent'] / 100:.1f}" for e in progress
        )
        parts.append(f'<polyline class="progress" points="{points}" fill="none"/>')
        for e in progress:
            cy = base - heights["progress"] * e.data["percent"] / 100
            parts.append(
                f'<circle class="progress-point" cx="{x(e.created_at):.1f}" cy="{cy:.1f}" r="2.5">'
                f"<title>{e.data['percent']}% at {_clock(e.created_at)}</title></circle>"
            )
    # The progress lane's scale, at its right edge; anchored at its end so "100%" is never cut by the edge.
    for percent, label_y in ((100, top["progress"] + 10), (0, base)):
        parts.append(f'<text class="scale-label" x="{WIDTH - 2}" y="{label_y:.1f}" text-anchor="end">{percent}%</text>')

    for question in questions:
        until = question.resolved_at or now
        waited = (until - question.created_at).total_seconds()
        x0 = x(question.created_at)
        width = max(x(until) - x0, 3.0)
        tip = (
            f"Asked at {_clock(question.created_at)}, waited {duration(waited)} for a person: {question.text[:80]} "
            f"({question.get_status_display().lower()})"
        )
        # Questions open at the same time each get a row of their own, so none hides another.
        row_y = top["question"] + rows[question.pk] * QUESTION_ROW
        parts.append(
            f'<rect class="question {question.status}" data-wait-seconds="{waited:.0f}" x="{x0:.1f}" '
            f'y="{row_y:.1f}" width="{width:.1f}" height="{QUESTION_ROW - 3}" rx="2">'
            f"<title>{escape(tip)}</title></rect>"
        )

    for event in events:
        if event.type == SessionEventType.ERROR:
            ex = x(event.created_at)
            kind = "Error (recoverable)" if event.data.get("recoverable") else "Error"
            tip = f"{kind} at {_clock(event.created_at)}: {event.data['error'][:120]}"
            parts.append(
                f'<g class="error"><line x1="{ex:.1f}" x2="{ex:.1f}" y1="{top["phase"]:.1f}" y2="{axis_y:.1f}"/>'
                f'<circle cx="{ex:.1f}" cy="{top["error"] + 9:.1f}" r="5"><title>{escape(tip)}</title></circle></g>'
            )

    step = next((s for s in TICK_STEPS if span_seconds / s <= 8), TICK_STEPS[-1])
    parts.append(f'<line class="axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{axis_y:.1f}" y2="{axis_y:.1f}"/>')
    tick = 0
    while tick <= span_seconds:
        tx = x(start + timedelta(seconds=tick))
        label = "start" if tick == 0 else f"+{duration(tick)}"
        parts.append(
            f'<line class="tick" x1="{tx:.1f}" x2="{tx:.1f}" y1="{axis_y:.1f}" y2="{axis_y + 5:.1f}"/>'
            f'<text class="tick-label" x="{tx:.1f}" y="{axis_y + 18:.1f}" text-anchor="middle">{label}</text>'
        )
        tick += step
    parts.append("</svg>")
    # Every agent-supplied string above went through escape() or quoteattr().
    return mark_safe("".join(parts))
