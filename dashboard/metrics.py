"""Prometheus metrics (issue 42): how long agents wait on people, for a scraper at /metrics.

Everything but `hookbridge_calls_held` is read from the tables at each scrape, so whichever worker answers
reports the same figures and a restart loses none: counts of rows only grow (a purge of old rows reads as a
counter reset, which Prometheus's rate() allows for). Calls held open are the one thing only a process knows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import timedelta
from typing import Any

from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from notify.models import Delivery
from questions import runtime as question_runtime
from questions.models import Question, Status

# Seconds from asking to answering: at once, within minutes, within the hour, the day. Floats: an `le` label
# reads "10.0", as Prometheus's own clients write it.
BUCKETS = (10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 4 * 3600.0, 24 * 3600.0)
# Questions without a project (none since projects came, in principle) are counted under this label.
NO_PROJECT = ""


def _project(row: Mapping[str, Any]) -> str:
    return str(row["project__name"] or NO_PROJECT)


def _time_to_answer() -> Metric:
    waited = ExpressionWrapper(F("resolved_at") - F("created_at"), output_field=DurationField())
    per_bucket = {f"le_{i}": Count("pk", filter=Q(waited__lte=timedelta(seconds=b))) for i, b in enumerate(BUCKETS)}
    rows = (
        Question.objects.filter(status=Status.ANSWERED, resolved_at__isnull=False)
        .annotate(waited=waited)
        .values("project__name", "kind")
        .annotate(count=Count("pk"), total=Sum("waited"), **per_bucket)
        .order_by("project__name", "kind")
    )
    family = HistogramMetricFamily(
        "hookbridge_time_to_answer_seconds",
        "Seconds from a question being asked to a person answering it",
        labels=["project", "kind"],
    )
    for typed in rows:
        row: dict[str, Any] = dict(typed)  # the bucket columns are named at run time
        buckets = [(repr(b), row[f"le_{i}"]) for i, b in enumerate(BUCKETS)] + [("+Inf", row["count"])]
        total: timedelta = row["total"] or timedelta(0)
        family.add_metric([_project(row), row["kind"]], buckets, total.total_seconds())
    return family


def _questions() -> Iterator[Metric]:
    rows = list(Question.objects.values("project__name", "kind", "status").annotate(count=Count("pk")).order_by())
    asked = CounterMetricFamily(
        "hookbridge_questions",
        "Questions asked, by how they ended (pending: not yet)",
        labels=["project", "kind", "status"],
    )
    waiting = GaugeMetricFamily(
        "hookbridge_questions_waiting", "Questions waiting for a person now", labels=["project", "kind"]
    )
    for row in sorted(rows, key=lambda r: (_project(r), r["kind"], r["status"])):
        asked.add_metric([_project(row), row["kind"], row["status"]], row["count"])
        if row["status"] == Status.PENDING:
            waiting.add_metric([_project(row), row["kind"]], row["count"])
    yield waiting
    yield asked


def _deliveries() -> Metric:
    family = CounterMetricFamily(
        "hookbridge_deliveries",
        "Notifications to people (Slack, e-mail, a webhook), by channel and where they stand (due: not sent yet)",
        labels=["channel", "outcome"],
    )
    rows = Delivery.objects.values("channel", "status").annotate(count=Count("pk")).order_by("channel", "status")
    for row in rows:
        family.add_metric([row["channel"], row["status"]], row["count"])
    return family


class Tables(Collector):
    """Each scrape's figures, read then."""

    def collect(self) -> Iterator[Metric]:
        yield from _questions()
        yield _time_to_answer()
        yield _deliveries()
        held = GaugeMetricFamily(
            "hookbridge_calls_held",
            "Agents' calls this worker holds open while they wait for a person (each worker its own)",
        )
        held.add_metric([], question_runtime.waiting_now)
        yield held


def exposition() -> bytes:
    """The metrics in Prometheus's text format."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Tables())
    return generate_latest(registry)
