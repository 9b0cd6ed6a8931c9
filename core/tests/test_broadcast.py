"""send_latest: a burst of changes to one page becomes a few pushes, and the last change always goes out; send
from a worker thread never waits for a loop."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest
from asgiref.sync import SyncToAsync, sync_to_async
from channels.layers import get_channel_layer

from core import broadcast, runtime


@pytest.fixture
def server_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop in a thread of its own, bound as the server's: on-commit hooks run beside it."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(_bind(), loop).result(timeout=5)
    yield loop
    # Sends handed to the loop by the last call finish before it stops (else: "never awaited").
    asyncio.run_coroutine_threadsafe(asyncio.sleep(3 * broadcast.LATEST_INTERVAL), loop).result(timeout=5)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=5)
    loop.close()
    runtime.server_loop = runtime.server_thread = None
    runtime.serves_web = None
    runtime.latest_sent.clear()
    runtime.latest_due.clear()


async def _bind() -> None:
    broadcast.bind_server_loop()


class Page:
    """A page's state as a builder reads it, and the pushes made of it."""

    def __init__(self) -> None:
        self.state = 0
        self.built: list[tuple[int, int]] = []  # (state read, thread)
        self.sent: list[dict[str, Any]] = []

    def build(self) -> list[broadcast.Push]:
        self.built.append((self.state, threading.get_ident()))
        return [("page", {"type": "dashboard.html", "html": f"state {self.state}"})]


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch) -> Page:
    page = Page()

    class Layer:
        async def group_send(self, group: str, message: dict[str, Any]) -> None:
            page.sent.append(message)

    monkeypatch.setattr(broadcast, "get_channel_layer", Layer)
    return page


def wait_for(condition: Any, timeout: float = 3) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_first_change_is_pushed_at_once_from_the_calling_thread(server_loop: Any, page: Page) -> None:
    page.state = 1
    broadcast.send_latest("page", page.build)
    assert page.built == [(1, threading.get_ident())]
    wait_for(lambda: len(page.sent) == 1)
    assert page.sent[0]["html"] == "state 1"


def test_a_burst_becomes_one_more_push_that_shows_the_last_change(server_loop: Any, page: Page) -> None:
    for state in range(1, 51):
        page.state = state
        broadcast.send_latest("page", page.build)
    wait_for(lambda: len(page.sent) == 2)
    time.sleep(3 * broadcast.LATEST_INTERVAL)
    assert [message["html"] for message in page.sent] == ["state 1", "state 50"]
    # The trailing push is built on the database thread, not on the loop or the caller.
    (_, caller), (_, trailing) = page.built
    assert trailing not in (caller, runtime.server_thread)


def test_keys_are_throttled_apart(server_loop: Any, page: Page) -> None:
    other = Page()
    other.sent = page.sent
    broadcast.send_latest("page", page.build)
    broadcast.send_latest("other page", other.build)
    assert len(page.built) == len(other.built) == 1


def test_a_change_made_while_the_trailing_push_renders_is_pushed_too(server_loop: Any, page: Page) -> None:
    rendering = threading.Event()
    release = threading.Event()

    def slow_build() -> list[broadcast.Push]:
        if page.built:  # the trailing push: hold it while another change commits
            rendering.set()
            release.wait(timeout=5)
        return page.build()

    broadcast.send_latest("page", slow_build)
    page.state = 2
    broadcast.send_latest("page", slow_build)
    assert rendering.wait(timeout=3)
    page.state = 3
    broadcast.send_latest("page", slow_build)
    release.set()
    wait_for(lambda: page.sent and page.sent[-1]["html"] == "state 3")


def test_without_a_server_loop_every_change_is_pushed(page: Page, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(broadcast, "send", lambda group, message: sent.append((group, message)))
    for state in range(3):
        page.state = state
        broadcast.send_latest("page", page.build)
    assert [message["html"] for _, message in sent] == ["state 0", "state 1", "state 2"]


def test_a_failing_build_is_logged_not_raised(server_loop: Any, caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> list[broadcast.Push]:
        raise RuntimeError("template error")

    broadcast.send_latest("page", broken)
    assert "Could not render a dashboard push" in caplog.text


class DaemonThreads(ThreadPoolExecutor):
    """Each call in a daemon thread of its own: a thread this test fails to free cannot hang the interpreter's exit."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as error:  # handed to whoever awaits the call
                future.set_exception(error)

        threading.Thread(target=run, daemon=True).start()
        return future


def test_a_push_from_a_thread_whose_loop_has_stopped_is_dropped_not_waited_for(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A test's loop ended while an ask's write still ran in its thread: that write's pushes once parked the thread
    for ever (async_to_sync waits for a loop that never runs again), and the interpreter hung joining it."""
    caplog.set_level(logging.INFO, logger="core.broadcast")
    loop_gone, pushed = threading.Event(), threading.Event()

    def write_then_push() -> None:
        loop_gone.wait(10)
        broadcast.send(broadcast.DASHBOARD_GROUP, {"type": "dashboard.html", "html": "<p>late</p>"})
        pushed.set()

    async def start_and_leave() -> asyncio.Future[None]:
        call = SyncToAsync(write_then_push, thread_sensitive=False, executor=DaemonThreads())
        started = asyncio.ensure_future(call())
        await asyncio.sleep(0.05)
        assert not started.done()
        return started

    # Stopped, not closed, as a test's loop is between tests: a closed one asgiref would notice.
    loop = asyncio.new_event_loop()
    try:
        call = loop.run_until_complete(start_and_leave())
        loop_gone.set()
        assert pushed.wait(5), "the push waited for a loop that has stopped"
        loop.run_until_complete(call)
    finally:
        loop.close()
    assert "Dropped dashboard.html for group dashboard: its event loop has stopped" in caplog.text


def test_a_push_from_a_worker_thread_goes_through_the_loop_that_called_it() -> None:
    """Outside the server (a test's loop), a worker thread hands the push to its loop rather than waiting on it."""
    layer = get_channel_layer()

    async def listen_then_push() -> dict[str, Any]:
        channel = await layer.new_channel()
        await layer.group_add("listeners", channel)
        await sync_to_async(broadcast.send, thread_sensitive=False)("listeners", {"type": "x.y", "n": 1})
        message: dict[str, Any] = await asyncio.wait_for(layer.receive(channel), timeout=5)
        return message

    assert runtime.server_loop is None
    assert asyncio.run(listen_then_push()) == {"type": "x.y", "n": 1}
