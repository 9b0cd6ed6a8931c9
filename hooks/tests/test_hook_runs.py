"""HookRun: one run per folder at a time, stale runs freed, outcomes recorded; its page, admin and WebSocket."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, User
from django.test import Client
from django.utils import timezone

from hooks.models import AtCapacity, Busy, DirectoryStatus, HookRun, RunStatus
from hooks.routing import websocket_urlpatterns
from tokens.models import AgentToken


def start(target: str = ".", max_concurrent: int = 1, **extra: Any) -> HookRun:
    fields: dict[str, Any] = {
        "tool": "jutsu_typescript_lint", "plugin": "jutsu-typescript", "hook": "lint", "title": "Lint Typescript",
        "command": "npm run lint", "target": target, "max_concurrent": max_concurrent, "timeout_seconds": 600,
        "caller": None, "caller_name": "agent-a", "fail_fast": True, "verbose": False,
    }  # fmt: skip
    fields.update(extra)
    return HookRun.start(**fields)


@pytest.mark.django_db
def test_it_refuses_a_second_run_in_the_same_folder() -> None:
    first = start()
    with pytest.raises(
        Busy, match=r"jutsu_typescript_lint is already running in '\.' \(started \d+ s ago by agent-a\)"
    ):
        start()
    assert start(target="packages/a").slot == 0  # another folder is free
    first.finish(RunStatus.PASSED)
    assert start().slot == 0  # free again once the first is done
    assert HookRun.objects.count() == 3


@pytest.mark.django_db
def test_max_concurrent_allows_that_many_runs_at_once() -> None:
    assert [start(max_concurrent=2).slot for _ in range(2)] == [0, 1]
    with pytest.raises(Busy, match="runs it there at most 2 times at once"):
        start(max_concurrent=2)


@pytest.mark.django_db
def test_a_run_whose_server_died_is_abandoned_and_frees_its_folder() -> None:
    stale = start()
    HookRun.objects.filter(pk=stale.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=600 + 61))
    fresh = start()
    stale.refresh_from_db()
    assert (stale.status, stale.slot) == (RunStatus.ABANDONED, None)
    assert fresh.slot == 0


@pytest.mark.django_db
def test_a_run_that_still_beats_is_not_abandoned() -> None:
    running = start()
    HookRun.objects.filter(pk=running.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=600))
    with pytest.raises(Busy):
        start()


@pytest.mark.django_db
def test_finishing_marks_the_folders_never_reached() -> None:
    run = start()
    first, *_ = run.plan(["a", "b", "c"])
    run.directory_started(first)
    run.directory_finished(first, status=DirectoryStatus.FAILED, exit_code=2, duration_seconds=0.5, output="boom")
    run.finish(RunStatus.FAILED)
    statuses = list(run.directories.values_list("directory", "status", "exit_code"))
    assert statuses == [("a", "failed", 2), ("b", "skipped", None), ("c", "skipped", None)]
    assert run.failed_count == 1
    cancelled = start(target="x")
    step = cancelled.plan(["x"])[0]
    cancelled.directory_started(step)
    cancelled.finish(RunStatus.CANCELLED)
    assert list(cancelled.directories.values_list("status", flat=True)) == ["cancelled"]


@pytest.fixture
def finished_run(db: None) -> HookRun:
    token, _ = AgentToken.issue("agent-a")
    run = start(caller=token)
    step = run.plan(["packages/b"])[0]
    run.directory_finished(
        step,
        status=DirectoryStatus.FAILED,
        exit_code=3,
        duration_seconds=1.25,
        output="lint error <b>",
        output_bytes=14,
    )
    run.finish(RunStatus.FAILED)
    return run


def test_the_run_page_shows_each_folder_and_its_output(client: Client, finished_run: HookRun) -> None:
    client.force_login(User.objects.create_user("alice", password="pw-alice-123"))
    page = client.get(f"/hooks/runs/{finished_run.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "lint error &lt;b&gt;" in html  # escaped, never markup
    assert "exit 3" in html
    assert "packages/b" in html
    assert "npm run lint" in html
    assert client.get(f"/hooks/runs/{uuid.uuid4()}/").status_code == 404


def test_the_run_page_needs_a_login(client: Client, finished_run: HookRun) -> None:
    response = client.get(f"/hooks/runs/{finished_run.pk}/")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_the_dashboard_lists_recent_runs(client: Client, finished_run: HookRun) -> None:
    client.force_login(User.objects.create_user("alice", password="pw-alice-123"))
    html = client.get("/").content.decode()
    assert f'id="hook-run-{finished_run.pk}"' in html
    assert 'data-status="failed"' in html


@pytest.mark.parametrize(
    "path",
    [
        "/admin/hooks/hookrun/",
        "/admin/hooks/hookrun/?status__exact=failed",
        "/admin/hooks/hookrun/?q=lint+error",
        "/admin/hooks/hookrun/{pk}/change/",
    ],
)
def test_runs_are_in_the_admin_for_review(client: Client, finished_run: HookRun, path: str) -> None:
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-root-12345"))
    response = client.get(path.format(pk=finished_run.pk))
    assert response.status_code == 200
    html = response.content.decode()
    assert "jutsu_typescript_lint" in html
    if "change" in path:
        assert "lint error &lt;b&gt;" in html
        assert 'name="_save"' not in html  # a record, not editable: no Save button
    else:
        assert "1 of 1" in html  # failed directories


@pytest.mark.django_db(transaction=True)
async def test_the_run_pages_socket_sends_the_run_as_it_stands() -> None:
    run = await database_sync_to_async(start)()
    application = URLRouter(websocket_urlpatterns)
    anonymous = WebsocketCommunicator(application, f"/ws/hooks/runs/{run.pk}/")
    anonymous.scope["user"] = AnonymousUser()
    assert (await anonymous.connect()) == (False, 4401)
    user = await database_sync_to_async(User.objects.create_user)("alice", password="pw-alice-123")
    communicator = WebsocketCommunicator(application, f"/ws/hooks/runs/{run.pk}/")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    state = await communicator.receive_from()
    assert 'id="run-live"' in state
    assert "Running" in state
    await communicator.disconnect()


@pytest.mark.django_db
def test_the_server_wide_cap_refuses_a_run_beyond_it_in_any_folder(settings: Any) -> None:
    settings.HOOKBRIDGE_HOOK_MAX_RUNS = 2
    first, _second = start(target="a"), start(target="b")
    with pytest.raises(AtCapacity, match=r"The server has 2 hook runs going, .*\(HOOKBRIDGE_HOOK_MAX_RUNS=2\)"):
        start(target="c")
    assert HookRun.objects.count() == 2  # the refused run left nothing behind
    first.finish(RunStatus.PASSED)
    assert start(target="c").status == RunStatus.RUNNING


@pytest.mark.django_db
def test_the_per_token_cap_counts_that_tokens_runs_only(settings: Any) -> None:
    settings.HOOKBRIDGE_HOOK_MAX_RUNS_PER_TOKEN = 1
    a, _ = AgentToken.issue("agent-a")
    b, _ = AgentToken.issue("agent-b")
    start(target="one", caller=a)
    with pytest.raises(
        AtCapacity, match=r"Token 'agent-a' has 1 hook runs going, .*HOOKBRIDGE_HOOK_MAX_RUNS_PER_TOKEN=1"
    ):
        start(target="two", caller=a)
    assert start(target="two", caller=b).caller == b  # another token is not held back


@pytest.mark.django_db
def test_a_stale_run_does_not_count_against_the_cap(settings: Any) -> None:
    settings.HOOKBRIDGE_HOOK_MAX_RUNS = 1
    stale = start(target="a")
    HookRun.objects.filter(pk=stale.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=600 + 61))
    assert start(target="b").status == RunStatus.RUNNING
