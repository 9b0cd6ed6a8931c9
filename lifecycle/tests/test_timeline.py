"""The session timeline SVG, parsed: a bar per phase, a marker per question, errors, progress, ticks."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from lifecycle import timeline
from lifecycle.models import AgentSession, LifecycleEvent, SessionEvent
from questions.models import Question
from tokens.models import AgentToken

SVG = "{http://www.w3.org/2000/svg}"


def seed(length: timedelta) -> tuple[AgentSession, datetime]:
    """A run of `length`: three phases, a plan, two questions, progress and an error."""
    token, _ = AgentToken.issue("agent-a")
    start = timezone.now() - length
    session = AgentSession.open(token=token, name="Seeded")
    AgentSession.objects.filter(pk=session.pk).update(created_at=start)
    session.refresh_from_db()

    def at(fraction: float) -> datetime:
        return start + length * fraction

    for kind, fraction, name in [
        ("phase-started", 0.0, "Analyze"),
        ("plan-started", 0.05, "Plan A"),
        ("plan-completed", 0.2, "Plan A"),
        ("phase-completed", 0.3, "Analyze"),
        ("phase-started", 0.3, "Build"),
        ("phase-completed", 0.7, "Build"),
        ("phase-started", 0.7, "Verify"),
    ]:
        LifecycleEvent.objects.create(
            event_type=kind,
            phase_name=name,
            asker=token,
            asker_name="agent-a",
            session=session,
            created_at=at(fraction),
        )
    for fraction, percent in [(0.1, 10), (0.5, 60), (0.9, 90)]:
        SessionEvent.objects.create(
            session=session, type="progress", data={"percent": percent}, created_at=at(fraction)
        )
    SessionEvent.objects.create(
        session=session, type="error", data={"error": "<b>boom</b>", "recoverable": True}, created_at=at(0.6)
    )
    for asked, answered in [(0.2, 0.25), (0.75, None)]:
        question = Question.objects.create(
            text=f"Q at {asked}",
            asker=token,
            asker_name="agent-a",
            fingerprint="f",
            session=session,
            created_at=at(asked),
        )
        if answered is not None:
            Question.objects.filter(pk=question.pk).update(status="answered", resolved_at=at(answered))
    return session, start


def parse(session: AgentSession) -> ET.Element:
    return ET.fromstring(str(timeline.render(session)))


def classes(element: ET.Element) -> set[str]:
    return set(element.get("class", "").split())


@pytest.mark.parametrize("length", [timedelta(minutes=4), timedelta(hours=6)], ids=["minutes", "hours"])
def test_it_draws_a_bar_per_phase_and_a_marker_per_question(db: None, length: timedelta) -> None:
    session, _ = seed(length)
    svg = parse(session)
    phases = [g for g in svg.iter(f"{SVG}g") if "phase" in classes(g)]
    assert [g.get("data-label") for g in phases] == ["Analyze", "Build", "Verify"]
    assert [("completed" in classes(g)) for g in phases] == [True, True, False]
    plans = [g for g in svg.iter(f"{SVG}g") if "plan" in classes(g)]
    assert [g.get("data-label") for g in plans] == ["Plan A"]

    questions = [r for r in svg.iter(f"{SVG}rect") if "question" in classes(r)]
    assert len(questions) == 2
    waited = int(questions[0].get("data-wait-seconds", "0"))
    assert abs(waited - length.total_seconds() * 0.05) <= 2
    # The marker is as wide as the wait: the still-open one (0.75 to now) is wider than the answered one.
    assert float(questions[1].get("width", 0)) > float(questions[0].get("width", 0))

    errors = [g for g in svg.iter(f"{SVG}g") if "error" in classes(g)]
    assert len(errors) == 1
    assert "<b>boom</b>" in "".join(errors[0].itertext())  # escaped text, not markup

    (line,) = [p for p in svg.iter(f"{SVG}polyline") if "progress" in classes(p)]
    assert len(line.get("points", "").split()) == 3


@pytest.mark.parametrize(
    ("length", "label"),
    [(timedelta(minutes=4), "+1m 00s"), (timedelta(hours=6), "+1h 00m")],
    ids=["minutes", "hours"],
)
def test_ticks_suit_the_length_of_the_run(db: None, length: timedelta, label: str) -> None:
    session, _ = seed(length)
    ticks = [t.text for t in parse(session).iter(f"{SVG}text") if "tick-label" in classes(t)]
    assert 3 <= len(ticks) <= 9, ticks
    assert ticks[0] == "start"
    assert label in ticks


def test_phase_bars_keep_their_order_in_time(db: None) -> None:
    session, _ = seed(timedelta(minutes=10))
    svg = parse(session)
    starts = [float(g.find(f"{SVG}rect").get("x", 0)) for g in svg.iter(f"{SVG}g") if "phase" in classes(g)]  # type: ignore[union-attr]
    assert starts == sorted(starts)
    assert len(set(starts)) == 3


@pytest.mark.django_db
def test_overlapping_questions_get_rows_of_their_own_and_every_mark_says_when() -> None:
    session, start = seed(timedelta(minutes=30))
    token = AgentToken.objects.get()
    # A third question asked while the still-open second one waits: it must not hide under it.
    Question.objects.create(
        text="Q while another waits", asker=token, asker_name="agent-a", fingerprint="g", session=session,
        created_at=start + timedelta(minutes=30) * 0.8,
    )  # fmt: skip
    svg = ET.fromstring(str(timeline.render(session)))
    bars = {rect.findtext(f"{SVG}title", "").split(": ", 1)[1][:21]: float(rect.get("y", "0"))
            for rect in svg.iter(f"{SVG}rect") if "question" in (rect.get("class") or "")}  # fmt: skip
    assert bars["Q at 0.75 (pending)"[:21]] != bars["Q while another waits"], bars
    assert bars["Q at 0.2 (answered)"[:21]] == bars["Q at 0.75 (pending)"[:21]], "a row is reused once free"
    titles = [title.text or "" for title in svg.iter(f"{SVG}title")]
    assert titles
    assert all(re.search(r"\d\d:\d\d:\d\d", title) for title in titles), titles
    labels = [text for text in svg.iter(f"{SVG}text") if text.get("class") == "scale-label"]
    assert [text.text for text in labels] == ["100%", "0%"]
    # Ending inside the picture: "100%" started 36 px from the edge and was cut off in Chromium.
    width = float(svg.get("viewBox", "0 0 0 0").split()[2])
    assert all(text.get("text-anchor") == "end" and float(text.get("x", "0")) <= width for text in labels)


def quiet_run(active: timedelta, quiet: timedelta, phases: list[str]) -> AgentSession:
    """A run that was busy for `active`, asked a question at its end, and has waited `quiet` since."""
    token, _ = AgentToken.issue("agent-a")
    start = timezone.now() - active - quiet
    session = AgentSession.open(token=token, name="Quiet")
    AgentSession.objects.filter(pk=session.pk).update(created_at=start)
    session.refresh_from_db()
    for n, name in enumerate(phases):
        LifecycleEvent.objects.create(
            event_type="phase-started", phase_number=str(n + 1), phase_name=name, asker=token,
            asker_name="agent-a", session=session, created_at=start + active * (n / len(phases)),
        )  # fmt: skip
    Question.objects.create(
        text="Still waiting?", asker=token, asker_name="agent-a", fingerprint="q", session=session,
        created_at=start + active,
    )  # fmt: skip
    return session


@pytest.mark.django_db
def test_the_axis_spans_the_activity_and_an_open_wait_points_to_now() -> None:
    session = quiet_run(timedelta(minutes=4), timedelta(hours=3), ["Repro", "Fix"])
    svg = parse(session)
    labels = [t.text or "" for t in svg.iter(f"{SVG}text") if "tick-label" in classes(t)]
    assert labels[0] == "start"
    assert labels[-1] == "now, +3h 00m"
    assert all(label.startswith(("+", "start")) and "h" not in label for label in labels[:-1]), labels
    (waiting,) = [r for r in svg.iter(f"{SVG}rect") if "question" in classes(r)]
    assert "open" in classes(waiting)
    assert int(waiting.get("data-wait-seconds", "0")) >= 3 * 3600, "its wait is told whole, to now"
    arrows = [p for p in svg.iter(f"{SVG}polygon") if "arrow" in classes(p)]
    assert len(arrows) == 2, "the open phase and the open wait each point on"
    # The busy four minutes fill the drawing: the last phase starts past a third of the width, not squeezed left.
    fix = next(g for g in svg.iter(f"{SVG}g") if g.get("data-label") == "2 Fix")
    assert float(fix.find(f"{SVG}rect").get("x", "0")) > 300  # type: ignore[union-attr]


@pytest.mark.django_db
def test_a_name_is_written_only_where_it_fits_and_the_legend_names_every_bar() -> None:
    names = ["Reproduce the flaky checkout test on CI", "Fix", "Verify on staging with the whole suite", "Ship"]
    names += [f"Step {n} with a name far too long for its bar" for n in range(20)]
    session = quiet_run(timedelta(minutes=10), timedelta(seconds=0), names)
    svg = parse(session)
    boxes = []
    for group in svg.iter(f"{SVG}g"):
        rect, text = group.find(f"{SVG}rect"), group.find(f"{SVG}text")
        if "phase" not in classes(group) or rect is None or text is None:
            continue
        left, width = float(rect.get("x", "0")), float(rect.get("width", "0"))
        label_left = float(text.get("x", "0"))
        label_right = label_left + len(text.text or "") * timeline.CHAR
        assert left <= label_left, f"{text.text!r} starts before its bar"
        assert label_right <= left + width, f"{text.text!r} runs past its bar"
        boxes.append((label_left, label_right))
    assert boxes, "some names or numbers are written"
    assert all(a[1] <= b[0] for a, b in zip(sorted(boxes), sorted(boxes)[1:], strict=False)), "no two overlap"
    page = str(timeline.render_with_legend(session))
    for n, name in enumerate(names, start=1):
        assert f">{n}</span> {n} {name} " in page, f"the legend names bar {n}"
