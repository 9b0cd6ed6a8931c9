from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from django.contrib.auth.models import User
from django.test import Client
from hypothesis import settings as hypothesis_settings
from playwright.async_api import Browser, Playwright, async_playwright, expect

from approvals import runtime as approvals_runtime
from core import runtime as core_runtime
from questions import runtime as question_runtime
from testing import live
from testing.forkserver import ForkServer
from testing.live import METRICS_TOKEN, LiveServer, copy_database, migrated_template, serving
from testing.project_world import World, make_world
from tokens import runtime as token_runtime
from tokens.models import AgentToken

# Fuzzing over real HTTP: a bounded count per tool keeps CI's run short; `--hypothesis-profile=deep`
# for a long local run. No example database: the server under test is new each run.
hypothesis_settings.register_profile("default", max_examples=12, deadline=None, database=None)
hypothesis_settings.register_profile("deep", max_examples=400, deadline=None, database=None)
hypothesis_settings.load_profile("default")


ROOT = Path(__file__).resolve().parent
# The system tests' tiers, by folder: a test's markers follow where it lives, never a module's mark, so a unit
# test beside its app is never swept into e2e. Unit tests live in each app's tests/ package.
# A page's assertions wait for what they expect: 20 s, not Playwright's 5, so a busy machine is not a failure
# (a slow machine is not a bug; how fast a page answers is a benchmark's to say).
expect.set_options(timeout=20_000)

TIER_MARKERS = {"e2e": ("e2e",), "browser": ("e2e", "browser"), "team": ("e2e", "team"), "clients": ("e2e",)}


# The order pytest-xdist hands out the test files in (`make test` runs it with --no-loadscope-reorder, so it
# keeps this one): the files with the most tests first, as xdist's own reordering does, the longest first
# among files of as many tests; files of one or two tests make one group, last, longest first. (xdist's own
# order put a 35-second one-test file last: begun after the rest, it ran half a minute on one worker while
# the others had finished, 2026-11-28.) Handing out the slow files first instead was tried (2026-11-27, 3 and
# 4 workers): the nginx deployment test, the benchmark comparison and the Claude Code terminal then started
# together, on a loaded machine, and failed. (The suite's slowest files by JUnit reports' times, 2026-11-27 and
# -28; a file not named keeps its place.)
SLOW_FIRST = [
    "tests/e2e/test_bench_smoke.py",
    "tests/clients/test_claude_code_tasks.py",
    "tests/clients/test_codex_cli.py",
    "tests/clients/test_opencode_cli.py",
    "tests/e2e/test_fuzz.py",
    "tests/e2e/test_installed_command.py",
    "tests/browser/test_pages.py",
    "tests/team/test_deploy.py",
    "tests/browser/test_deliberate.py",
    "tests/e2e/test_stdio.py",
    "tests/browser/test_forms.py",
    "tests/e2e/test_register.py",
    "tests/e2e/test_notify.py",
    "hookbridge_site/tests/test_migrations.py",
    "tests/e2e/test_stdio_open.py",
    "tests/e2e/test_claude_hooks.py",
    "tests/e2e/test_serve_command.py",
    "tests/e2e/test_auth_and_input.py",
    "tests/browser/test_projects.py",
    "tests/clients/test_cancellation.py",
    "tests/e2e/test_hooks.py",
    "tests/team/test_notify.py",
    "tests/browser/test_accessibility.py",
    "tests/browser/test_big_queue.py",
    "tests/team/test_faults.py",
    "tests/e2e/test_shutdown.py",
    "tests/browser/test_dashboard.py",
    "tests/e2e/test_webhook.py",
]


@pytest.hookimpl(tryfirst=True)  # before -m selects by them
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.relative_to(ROOT).parts
        if len(parts) > 2 and parts[0] == "tests":
            for marker in TIER_MARKERS.get(parts[1], ()):
                item.add_marker(marker)
        # A test that drives chromium runs in its worker's one event loop, where the worker's one Playwright
        # driver lives (`playwright_driver`): first, so that it is the closest asyncio mark.
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.asyncio(loop_scope="session"), append=False)


class SlowFirst:
    @pytest.hookimpl(trylast=True)  # after pytest-django's order (by database use), which the stable sort keeps
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        rank = {path: n for n, path in enumerate(SLOW_FIRST)}
        tests_in = Counter(item.path for item in items)

        def order(item: pytest.Item) -> tuple[int, int, bool]:
            path = item.path.relative_to(ROOT).as_posix()
            # Most tests first; then the slow; then servers before units.
            return -max(tests_in[item.path], 2), rank.get(path, len(SLOW_FIRST)), not path.startswith("tests/")

        items.sort(key=order)


def pytest_unconfigure(config: pytest.Config) -> None:
    if live.fork_server is not None:
        live.fork_server.close()
        live.fork_server = None


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SlowFirst(), "hookbridge-slow-first")
    live.fork_server = ForkServer()
    # A run started in the background of a script (`make test &`) inherits SIGINT and SIGQUIT ignored, and so
    # would every server it starts: Twisted leaves an ignored SIGINT ignored, so a `serve` told to stop with it
    # ran on (a CI run's test_register hung so, 2026-11-28). A handler of our own is reset to the default in a
    # child, so each server gets SIGINT as a terminal gives it.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(tmp_path_factory: pytest.TempPathFactory) -> None:
    """On SQLite, the tests' database is a WAL file of each worker's own, as the server's is, and starts as a copy
    of the checkout's migrated template, the one every server's database is copied from.

    Django's default, a shared-cache in-memory database, locks whole tables between connections and fails at
    once instead of waiting: a write on asgiref's database thread while the read thread read the same table
    failed with "database table is locked", which a WAL file (readers never block the writer) cannot.
    Migrating each worker's database from nothing took about 4 s of CPU, six workers a run (the two Pythons'
    runs); on the copy, Django's `migrate` (django_db_keepdb) finds every migration applied.
    """
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        folder = tmp_path_factory.mktemp("database")
        name = folder / "test.sqlite3"
        # A server's environment (its settings, its own data folder), for the template's one `migrate`.
        copy_database(migrated_template(ROOT, LiveServer(tmp=folder).env), name)
        database.setdefault("TEST", {})["NAME"] = str(name)


@pytest.fixture(scope="session")
def django_db_keepdb(request: pytest.FixtureRequest) -> bool:
    """Keep the database django_db_modify_db_settings copied (on PostgreSQL, `--reuse-db` as pytest-django has
    it); `--create-db` still makes it anew."""
    from django.conf import settings

    return settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3" or bool(
        request.config.getvalue("reuse_db")
    )


def _forget_process_state() -> None:
    token_runtime.request_buckets.clear()
    question_runtime.asks_per_token.clear()
    # The rules and policies this process compiled: a test's rows are rolled back without the signals that
    # would clear them, and the next test within the second would be decided by the last one's policy.
    approvals_runtime.approval_rules = approvals_runtime.approval_policies = None
    # The loop a test that called the ASGI application bound as "the server's" (core.broadcast.bind_server_loop):
    # once that test's loop closed, every later test's pushes from worker threads went to it and were dropped
    # (a dashboard test after the /mcp edge test's waited for a card that never came).
    core_runtime.server_loop = core_runtime.server_thread = None


@pytest.fixture(autouse=True)
def fresh_request_allowances() -> Iterator[None]:
    """Each test starts with full per-token allowances (HOOKBRIDGE_REQUESTS_PER_MINUTE): token ids repeat
    from one test's database to the next, and one test's requests must not spend another's. Nor its rules."""
    _forget_process_state()
    yield
    _forget_process_state()


@pytest.fixture
def agent(db: None) -> tuple[AgentToken, str]:
    return AgentToken.issue("agent-a")


@pytest.fixture
def world(db: None, settings: Any) -> World:
    """Issue 31's cast (testing.project_world): two projects, a person of each role, an outsider, a superuser."""
    settings.HOOKBRIDGE_NEW_USER_ROLE = ""
    return make_world()


@pytest.fixture
def user(db: None) -> User:
    return User.objects.create_user("alice", password="pw-alice-123")


@pytest.fixture
def logged_in(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


@pytest.fixture(scope="session")
def live_server_proc() -> Iterator[LiveServer]:
    """One daphne worker for the end-to-end tests (a long hold: calls block until answered)."""
    yield from serving(
        HOOKBRIDGE_MAX_HOLD="120", HOOKBRIDGE_PROGRESS_INTERVAL="0.3", HOOKBRIDGE_METRICS_TOKEN=METRICS_TOKEN
    )


@pytest.fixture(scope="session")
def claim_server() -> Iterator[LiveServer]:
    """Claims lapse after 2 s without activity (180 s by default)."""
    yield from serving(HOOKBRIDGE_CLAIM_SECONDS="2")


@pytest.fixture(scope="session")
def empty_server() -> Iterator[LiveServer]:
    """A worker no test asks questions of: its dashboard shows what a first run shows."""
    yield from serving()


@pytest.fixture(scope="session")
def short_hold_server() -> Iterator[LiveServer]:
    """A worker that gives up holding a call without a progress token after 1.5 s."""
    yield from serving(HOOKBRIDGE_MAX_HOLD="1.5", HOOKBRIDGE_PROGRESS_INTERVAL="0.3")


@pytest.fixture(scope="session")
def askme_timeout_server() -> Iterator[LiveServer]:
    """A worker whose Ask-Me questions time out after 1.5 s."""
    yield from serving(HOOKBRIDGE_ASKME_TIMEOUT="1.5", HOOKBRIDGE_MAX_HOLD="60")


@pytest.fixture(scope="session")
def rate_limited_server() -> Iterator[LiveServer]:
    """A worker where a token may ask 2 new questions a minute."""
    yield from serving(HOOKBRIDGE_QUESTIONS_PER_MINUTE="2", HOOKBRIDGE_MAX_HOLD="0.5")


CHROMIUM = "/usr/bin/chromium"


CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="session")
def chromium_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Debian's chromium (never a downloaded build), started once per test worker by Playwright's own
    launch-server, with the flags its `launch` passes; each test connects to it. Its WebSocket endpoint."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (make system-deps)")
        pytest.skip(f"{CHROMIUM} is not installed (make system-deps installs it)")
    config = tmp_path_factory.mktemp("chromium") / "launch.json"
    config.write_text(json.dumps({"executablePath": CHROMIUM, "args": CHROMIUM_ARGS, "headless": True}))
    server = subprocess.Popen(
        [sys.executable, "-m", "playwright", "launch-server", "--browser", "chromium", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,  # its own process group: the node driver and chromium go with it
    )  # fmt: skip
    assert server.stdout is not None
    endpoint = server.stdout.readline().strip()
    # Whatever it says later is read and dropped: a full pipe would stop the browser.
    threading.Thread(target=server.stdout.read, daemon=True).start()
    if not endpoint.startswith("ws://"):
        os.killpg(server.pid, signal.SIGKILL)
        pytest.fail(f"Playwright's launch-server did not start chromium: {endpoint!r}")
    try:
        yield endpoint
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def playwright_driver() -> AsyncIterator[Playwright]:
    """Playwright's node driver, started once per test worker: one per test was 87 node processes of 0.55 s
    of CPU each in a CI run (2026-11-28). Its objects belong to the loop that started it, so the tests that
    use it run in the worker's session loop (pytest_collection_modifyitems marks them)."""
    async with async_playwright() as playwright:
        yield playwright


@pytest_asyncio.fixture(loop_scope="session")
async def browser(chromium_server: str, playwright_driver: Playwright) -> AsyncIterator[Browser]:
    """This worker's chromium, connected for one test: the contexts it opens are closed after it."""
    browser = await playwright_driver.chromium.connect(chromium_server)
    yield browser
    await browser.close()


@pytest.fixture(scope="session")
def keepalive_server() -> Iterator[LiveServer]:
    """Progress every 2 s: a 5 s client timeout that resets on progress is scaled down from the hosts' 30 s."""
    yield from serving(HOOKBRIDGE_MAX_HOLD="120", HOOKBRIDGE_PROGRESS_INTERVAL="2")
