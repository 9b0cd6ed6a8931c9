"""Issue 42: Prometheus scrapes /metrics from a real daphne worker; one answer moves the time-to-answer histogram
and the waiting figures, and the Analytics page counts the same answers."""

from __future__ import annotations

import asyncio
import csv
import io
from collections.abc import Iterator

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from testing.live import METRICS_TOKEN, LiveServer, serving


@pytest.fixture(scope="module")
def metrics_server() -> Iterator[LiveServer]:
    """A worker of this file's own: `hookbridge_calls_held` counts every call its process holds, and on the
    shared worker another file's calls, still ending as this test began, moved it (5 held before, 1 during)."""
    yield from serving(
        HOOKBRIDGE_MAX_HOLD="120", HOOKBRIDGE_PROGRESS_INTERVAL="0.3", HOOKBRIDGE_METRICS_TOKEN=METRICS_TOKEN
    )


async def scrape(server: LiveServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    async with httpx2.AsyncClient(base_url=server.url, timeout=60) as http:
        response = await http.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert response.status_code == 200, response.text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


async def analytics_answered(server: LiveServer, project: str) -> int:
    """The answered count the Analytics page gives a project (its CSV: the same numbers as the page)."""
    async with server.login() as browser:
        response = await browser.get("/analytics/", params={"format": "csv"})
    assert response.status_code == 200, response.text
    rows = list(csv.reader(io.StringIO(response.text)))
    return next((int(row[3]) for row in rows if row[:2] == ["project", project]), 0)


def figure(figures: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return figures.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_one_answer_moves_the_histogram_and_a_held_call_is_counted_while_it_waits(
    metrics_server: LiveServer,
) -> None:
    labels = {"project": "default", "kind": "question"}
    before = await scrape(metrics_server)
    assert figure(before, "hookbridge_calls_held") == 0
    answered_before = await analytics_answered(metrics_server, "default")
    async with metrics_server.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": "Metrics: counted?"}))
        question = await metrics_server.wait_for_question("Metrics: counted?")
        waiting = await scrape(metrics_server)
        assert figure(waiting, "hookbridge_calls_held") == figure(before, "hookbridge_calls_held") + 1
        assert figure(waiting, "hookbridge_questions_waiting", **labels) == (
            figure(before, "hookbridge_questions_waiting", **labels) + 1
        )
        assert (await metrics_server.answer_via_api(question["id"], "counted")).status_code == 200
        await asyncio.wait_for(call, 30)
    after = await scrape(metrics_server)
    count = "hookbridge_time_to_answer_seconds_count"
    assert figure(after, count, **labels) == figure(before, count, **labels) + 1
    bucket = "hookbridge_time_to_answer_seconds_bucket"
    assert figure(after, bucket, le="+Inf", **labels) == figure(before, bucket, le="+Inf", **labels) + 1
    assert figure(after, "hookbridge_questions_total", status="answered", **labels) == (
        figure(before, "hookbridge_questions_total", status="answered", **labels) + 1
    )
    assert figure(after, "hookbridge_calls_held") == figure(before, "hookbridge_calls_held")
    # The Analytics page shows the same figure: every answer the histogram counts in the project, and this one.
    answered = await analytics_answered(metrics_server, "default")
    assert answered == answered_before + 1
    counted = sum(value for (name, found), value in after.items() if name == count and ("project", "default") in found)
    assert answered == counted
    async with httpx2.AsyncClient(base_url=metrics_server.url, timeout=60) as http:
        refused = await http.get("/metrics", headers={"Authorization": "Bearer not-it"})
    assert refused.status_code == 401
