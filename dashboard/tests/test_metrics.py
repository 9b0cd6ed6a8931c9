"""Issue 42: /metrics for Prometheus — how long agents wait on people, behind HOOKBRIDGE_METRICS_TOKEN."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from notify.models import Delivery
from notify.models import Status as DeliveryStatus
from projects.models import Project
from questions import runtime as question_runtime
from questions.kinds import Kind
from questions.models import Question, Status
from tokens.models import AgentToken

TOKEN = "scrape-me-0123456789"


@pytest.fixture
def metrics_on(settings: Any) -> None:
    settings.HOOKBRIDGE_METRICS_TOKEN = TOKEN


def scrape(client: Client) -> dict[str, list[Sample]]:
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    families = text_string_to_metric_families(response.content.decode())
    return {family.name: family.samples for family in families}


def value(samples: list[Sample], name: str, **labels: str) -> float:
    found = [s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, (name, labels, samples)
    return found[0]


def asked(token: AgentToken, text: str, *, kind: str = Kind.QUESTION, minutes_ago: float = 0) -> Question:
    question = Question.ask(asker=token, asker_name=token.name, text=text, options=[], kind=kind)[0]
    Question.objects.filter(pk=question.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))
    return question


def answered_after(question: Question, seconds: float, answer: Any = "yes") -> None:
    question.refresh_from_db()
    question.record_answer(answer, by_token=None)
    Question.objects.filter(pk=question.pk).update(resolved_at=question.created_at + timedelta(seconds=seconds))


def test_it_is_not_there_without_a_token_set(client: Client, db: None) -> None:
    response = client.get("/metrics", headers={"Authorization": "Bearer "})
    assert response.status_code == 404


@pytest.mark.parametrize("authorization", [None, "Bearer wrong", f"Basic {TOKEN}", TOKEN, f"Bearer {TOKEN}x"])
def test_it_refuses_a_scraper_without_the_token(
    client: Client, db: None, metrics_on: None, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="hookbridge-metrics"'
    assert b"HOOKBRIDGE_METRICS_TOKEN" in response.content
    assert b"hookbridge_" not in response.content


def test_it_reports_the_time_to_answer_as_a_histogram_by_project_and_kind(
    client: Client, db: None, metrics_on: None
) -> None:
    web = Project.objects.create(name="web")
    token, _ = AgentToken.issue("web-agent", project=web)
    answered_after(asked(token, "Quick?", minutes_ago=60), 20)
    answered_after(asked(token, "Slow?", minutes_ago=60), 700)
    answered_after(asked(token, "Approve?", kind=Kind.APPROVAL, minutes_ago=60), 5, {"behavior": "allow"})
    asked(token, "Still waiting?")

    samples = scrape(client)["hookbridge_time_to_answer_seconds"]
    labels = {"project": "web", "kind": "question"}
    assert value(samples, "hookbridge_time_to_answer_seconds_count", **labels) == 2
    assert value(samples, "hookbridge_time_to_answer_seconds_sum", **labels) == pytest.approx(720)
    assert value(samples, "hookbridge_time_to_answer_seconds_bucket", le="10.0", **labels) == 0
    assert value(samples, "hookbridge_time_to_answer_seconds_bucket", le="30.0", **labels) == 1
    assert value(samples, "hookbridge_time_to_answer_seconds_bucket", le="600.0", **labels) == 1
    assert value(samples, "hookbridge_time_to_answer_seconds_bucket", le="1800.0", **labels) == 2
    assert value(samples, "hookbridge_time_to_answer_seconds_bucket", le="+Inf", **labels) == 2
    approval = {"project": "web", "kind": "approval"}
    assert value(samples, "hookbridge_time_to_answer_seconds_bucket", le="10.0", **approval) == 1
    assert value(samples, "hookbridge_time_to_answer_seconds_count", **approval) == 1


def test_it_counts_the_questions_waiting_and_how_each_ended(client: Client, db: None, metrics_on: None) -> None:
    ops = Project.objects.create(name="ops")
    token, _ = AgentToken.issue("ops-agent", project=ops)
    asked(token, "One?")
    asked(token, "Two?")
    answered_after(asked(token, "Three?"), 3)
    timed_out = asked(token, "Four?")
    Question.objects.filter(pk=timed_out.pk).update(status=Status.TIMED_OUT, resolved_at=timezone.now())

    figures = scrape(client)
    assert value(figures["hookbridge_questions_waiting"], "hookbridge_questions_waiting", project="ops") == 2
    questions = figures["hookbridge_questions"]
    assert value(questions, "hookbridge_questions_total", project="ops", status="pending") == 2
    assert value(questions, "hookbridge_questions_total", project="ops", status="answered") == 1
    assert value(questions, "hookbridge_questions_total", project="ops", status="timed_out") == 1


def test_it_counts_deliveries_by_channel_and_outcome(client: Client, db: None, metrics_on: None) -> None:
    token, _ = AgentToken.issue("agent")
    for text, channel, status in [
        ("A?", "slack", DeliveryStatus.SENT),
        ("B?", "slack", DeliveryStatus.SENT),
        ("C?", "slack", DeliveryStatus.FAILED),
        ("D?", "email", DeliveryStatus.SKIPPED),
    ]:
        question = asked(token, text)
        Delivery.objects.update_or_create(
            question=question, purpose="notify", channel=channel,
            defaults={"target": "#team", "due_at": timezone.now(), "status": status},
        )  # fmt: skip

    deliveries = scrape(client)["hookbridge_deliveries"]
    assert value(deliveries, "hookbridge_deliveries_total", channel="slack", outcome="sent") == 2
    assert value(deliveries, "hookbridge_deliveries_total", channel="slack", outcome="failed") == 1
    assert value(deliveries, "hookbridge_deliveries_total", channel="email", outcome="skipped") == 1


def test_it_reports_the_calls_this_worker_holds(
    client: Client, db: None, metrics_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(question_runtime, "waiting_now", 3)
    held = scrape(client)["hookbridge_calls_held"]
    assert value(held, "hookbridge_calls_held") == 3
