"""/hooks/runs/: every hook run, newest first, filtered by hook, status and agent."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from hooks.models import HookRun, RunStatus
from hooks.views import RUNS_PER_PAGE


def finished(tool: str, title: str, status: RunStatus, caller_name: str, target: str = ".") -> HookRun:
    fields: dict[str, Any] = {
        "tool": tool, "plugin": "p", "hook": tool, "title": title, "command": "true", "target": target,
        "max_concurrent": 1, "timeout_seconds": 60, "caller": None, "caller_name": caller_name, "fail_fast": True,
        "verbose": False,
    }  # fmt: skip
    run = HookRun.start(**fields)
    run.plan([target])
    run.finish(status)
    return run


@pytest.fixture
def runs(db: None) -> dict[str, HookRun]:
    return {
        "lint-passed": finished("jutsu_lint", "Lint Code", RunStatus.PASSED, "agent-a", "web"),
        "lint-failed": finished("jutsu_lint", "Lint Code", RunStatus.FAILED, "agent-b", "api"),
        "tests-failed": finished("do_tests", "Run Tests", RunStatus.FAILED, "agent-a", "docs"),
    }


def shown(page: str, runs: dict[str, HookRun]) -> set[str]:
    return {name for name, run in runs.items() if f'id="hook-run-{run.pk}"' in page}


def test_it_needs_a_login(client: Client, db: None) -> None:
    response = client.get("/hooks/runs/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_it_lists_every_run_newest_first_with_a_link_to_each(logged_in: Client, runs: dict[str, HookRun]) -> None:
    page = logged_in.get("/hooks/runs/").content.decode()
    assert shown(page, runs) == set(runs)
    positions = [page.index(f'id="hook-run-{run.pk}"') for run in reversed(runs.values())]
    assert positions == sorted(positions)
    assert f'href="/hooks/runs/{runs["lint-failed"].pk}/"' in page
    assert "3 runs, newest first." in page


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("hook=jutsu_lint", {"lint-passed", "lint-failed"}),
        ("status=failed", {"lint-failed", "tests-failed"}),
        ("agent=agent-a", {"lint-passed", "tests-failed"}),
        ("hook=jutsu_lint&status=failed&agent=agent-b", {"lint-failed"}),
        ("hook=do_tests&status=passed", set()),
    ],
)
def test_it_filters_by_hook_status_and_agent(
    logged_in: Client, runs: dict[str, HookRun], query: str, expected: set[str]
) -> None:
    response = logged_in.get(f"/hooks/runs/?{query}")
    assert response.status_code == 200
    assert shown(response.content.decode(), runs) == expected


def test_the_filters_offer_what_has_run(logged_in: Client, runs: dict[str, HookRun]) -> None:
    page = logged_in.get("/hooks/runs/").content.decode()
    assert '<option value="jutsu_lint">Lint Code (jutsu_lint)</option>' in page
    assert '<option value="do_tests">Run Tests (do_tests)</option>' in page
    assert '<option value="agent-b">agent-b</option>' in page
    assert '<option value="timed-out">Timed out</option>' in page


def test_a_filter_naming_nothing_that_ran_says_so_and_lists_nothing(
    logged_in: Client, runs: dict[str, HookRun]
) -> None:
    response = logged_in.get("/hooks/runs/?hook=no_such_hook&status=bogus")
    assert response.status_code == 200
    page = response.content.decode()
    assert shown(page, runs) == set()
    assert "hook: Select a valid choice. no_such_hook is not one of the available choices." in page
    assert "status: Select a valid choice. bogus is not one of the available choices." in page


def test_an_htmx_request_gets_only_the_list(logged_in: Client, runs: dict[str, HookRun]) -> None:
    response = logged_in.get("/hooks/runs/?status=passed", headers={"HX-Request": "true"})
    assert response.text.lstrip().startswith('<div id="runs-table">')
    assert "<html" not in response.text
    assert shown(response.text, runs) == {"lint-passed"}


def test_it_pages_and_keeps_the_filters_in_the_links(logged_in: Client, db: None) -> None:
    for _ in range(RUNS_PER_PAGE + 1):
        finished("do_tests", "Run Tests", RunStatus.PASSED, "agent-a")
    page = logged_in.get("/hooks/runs/?status=passed").content.decode()
    assert page.count('class="hook-run ') == RUNS_PER_PAGE
    assert 'href="?status=passed&amp;page=2">Older</a>' in page
    second = logged_in.get("/hooks/runs/?status=passed&page=2").content.decode()
    assert second.count('class="hook-run ') == 1


def test_the_query_count_does_not_grow_with_the_runs(logged_in: Client, runs: dict[str, HookRun]) -> None:
    with CaptureQueriesContext(connection) as few:
        logged_in.get("/hooks/runs/")
    for _ in range(10):
        finished("do_tests", "Run Tests", RunStatus.PASSED, "agent-c")
    with CaptureQueriesContext(connection) as many:
        logged_in.get("/hooks/runs/")
    assert len(many) == len(few)


def test_the_navigation_and_the_dashboard_link_to_it(logged_in: Client, runs: dict[str, HookRun]) -> None:
    dashboard = logged_in.get("/").content.decode()
    assert '<a href="/hooks/runs/">Hooks</a>' in dashboard
    assert '<a href="/hooks/runs/">All hook runs, with filters</a>' in dashboard
    run_page = logged_in.get(runs["lint-passed"].get_absolute_url()).content.decode()
    assert '<a href="/hooks/runs/">All hook runs</a>' in run_page
