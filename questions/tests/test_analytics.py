"""Issue 42: the Analytics page — how long agents wait on people, against questions answered at known times."""

from __future__ import annotations

import csv
import io
from datetime import datetime, time, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from questions.kinds import Kind
from questions.models import Question, Status
from testing.project_world import World
from tokens.models import AgentToken


def asked(token: AgentToken, text: str, *, days_ago: int = 0, **fields: Any) -> Question:
    """Asked now, or at noon of the day DAYS_AGO back: "now less so many days" fell on the day before in a day's
    first half hour (a CI run at 00:16 counted the questions of two days ago a day early)."""
    question = Question.ask(asker=token, asker_name=token.name, text=text, options=[], **fields)[0]
    if days_ago == 0:
        when = timezone.now()
    else:
        when = timezone.make_aware(datetime.combine(timezone.localdate() - timedelta(days=days_ago), time(12)))
    Question.objects.filter(pk=question.pk).update(created_at=when)
    question.refresh_from_db()
    return question


def answered(question: Question, after: float, by: User, answer: Any = "yes") -> None:
    question.record_answer(answer, by_user=by)
    Question.objects.filter(pk=question.pk).update(resolved_at=question.created_at + timedelta(seconds=after))


def timed_out(question: Question) -> None:
    Question.objects.filter(pk=question.pk).update(status=Status.TIMED_OUT, resolved_at=timezone.now())


def seen_as(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def rows(client: Client, days: int = 30) -> list[dict[str, str]]:
    response = client.get("/analytics/", {"days": str(days), "format": "csv"})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv"
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def row(found: list[dict[str, str]], breakdown: str, value: str) -> dict[str, str]:
    matching = [r for r in found if r["breakdown"] == breakdown and r["value"] == value]
    assert len(matching) == 1, (breakdown, value, found)
    return matching[0]


@pytest.fixture
def known_waits(world: World) -> World:
    """In web: answered after 10 s, 60 s and 600 s (ann, ann, adm), one expired, one waiting, one from 40 days
    ago; in ops, which the web people do not see: one answered after an hour."""
    web, ops = world.tokens["web"], world.tokens["ops"]
    ann, adm = world.people["ann"], world.people["adm"]
    answered(asked(web, "Ten?", days_ago=2), 10, ann)
    answered(asked(web, "Sixty?", days_ago=2), 60, ann)
    approval = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "host_title": "Codex"}
    answered(asked(web, "ls", days_ago=1, kind=Kind.APPROVAL, payload=approval), 600, adm, {"behavior": "allow"})
    timed_out(asked(web, "Expired?", days_ago=1))
    answered(asked(web, "Long ago?", days_ago=40), 5, ann)
    answered(asked(ops, "Ops?", days_ago=1), 3600, world.people["out"])
    return world


def test_it_counts_asked_answered_expired_and_the_waits_at_p50_and_p90(client: Client, known_waits: World) -> None:
    found = rows(seen_as(client, known_waits.people["ann"]))
    everything = row(found, "all", "All")
    # Five asked in the window (the world's own "Deploy web?" still waits), three answered, one expired.
    assert (everything["asked"], everything["answered"], everything["expired_unanswered"]) == ("5", "3", "1")
    assert (everything["p50_seconds"], everything["p90_seconds"]) == ("60.0", "600.0")


def test_it_breaks_the_figures_down_by_person_agent_host_and_kind(client: Client, known_waits: World) -> None:
    found = rows(seen_as(client, known_waits.people["ann"]))
    ann = row(found, "person", "ann")
    assert (ann["asked"], ann["answered"], ann["p50_seconds"]) == ("", "2", "10.0")
    assert row(found, "person", "adm")["p90_seconds"] == "600.0"
    assert row(found, "agent", "web-agent")["asked"] == "5"
    assert row(found, "host", "Codex")["answered"] == "1"
    assert row(found, "host", "over MCP")["asked"] == "4"
    # Kinds in the dashboard's words, not their stored names (issue 55).
    assert row(found, "kind", "Approval")["p50_seconds"] == "600.0"
    assert row(found, "kind", "Question")["expired_unanswered"] == "1"
    assert row(found, "project", "web")["asked"] == "5"


def test_it_counts_each_day_and_the_window_chooses_what_is_in(client: Client, known_waits: World) -> None:
    client = seen_as(client, known_waits.people["ann"])
    found = rows(client, days=7)
    days = [r for r in found if r["breakdown"] == "day"]
    assert len(days) == 7
    two_days_ago = (timezone.localdate() - timedelta(days=2)).isoformat()
    assert row(found, "day", two_days_ago)["answered"] == "2"
    assert row(rows(client, days=90), "all", "All")["asked"] == "6", "the question of 40 days ago is in 90 days"


def test_nobody_sees_figures_of_a_project_they_are_not_in(client: Client, known_waits: World) -> None:
    found = rows(seen_as(client, known_waits.people["vic"]))  # a viewer of web
    assert [r["value"] for r in found if r["breakdown"] == "project"] == ["web"]
    assert not [r for r in found if r["value"] in ("ops-agent", "out")]
    outsider = rows(seen_as(Client(), known_waits.people["out"]))  # answers in ops only
    assert row(outsider, "all", "All")["asked"] == "2"
    assert row(outsider, "all", "All")["p50_seconds"] == "3600.0"


def test_the_page_shows_the_figures_and_draws_each_day(client: Client, known_waits: World) -> None:
    page = seen_as(client, known_waits.people["ann"]).get("/analytics/").content.decode()
    figures = page[page.index('<dl class="figures">') : page.index("</dl>")]
    assert "<dt>Time to answer, p50</dt><dd>1m 00s</dd>" in figures.replace("\n", "").replace("  ", "")
    assert page.count('<rect class="asked"') == 30
    assert 'role="img" aria-labelledby="by-day-caption"' in page
    assert '<a href="/analytics/">Analytics</a>' in page


def test_the_page_with_no_window_asked_marks_the_window_it_shows(client: Client, known_waits: World) -> None:
    """Issue 55, point 6: the picker said "the last 7 days" while the page covered 30."""
    page = seen_as(client, known_waits.people["ann"]).get("/analytics/").content.decode()
    assert '<option value="30" selected>the last 30 days</option>' in page
    assert '<option value="7">the last 7 days</option>' in page
    assert "Questions asked in the last 30 days, from " in page


def test_dismissed_and_withdrawn_questions_are_counted_and_shown(client: Client, known_waits: World) -> None:
    web = known_waits.tokens["web"]
    asked(web, "Dismiss me?", days_ago=1).dismiss(by="ann")
    asked(web, "Gone?", days_ago=1).abort("the agent cancelled its call")
    found = rows(seen_as(client, known_waits.people["ann"]))
    everything = row(found, "all", "All")
    assert (everything["asked"], everything["dismissed"], everything["withdrawn"]) == ("7", "1", "1")
    assert row(found, "agent", "web-agent")["dismissed"] == "1"
    page = seen_as(client, known_waits.people["ann"]).get("/analytics/").content.decode()
    figures = page[page.index('<dl class="figures">') : page.index("</dl>")].replace("\n", "").replace("  ", "")
    assert "<dt>Dismissed</dt><dd>1</dd>" in figures
    assert "<dt>Withdrawn</dt><dd>1</dd>" in figures


def test_a_window_it_does_not_offer_is_refused_naming_the_field(client: Client, known_waits: World) -> None:
    response = seen_as(client, known_waits.people["ann"]).get("/analytics/", {"days": "1000"})
    assert response.status_code == 400
    assert "days: Select a valid choice. 1000 is not one of the available choices." in response.content.decode()


def test_it_needs_a_login(client: Client, db: None) -> None:
    response = client.get("/analytics/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
