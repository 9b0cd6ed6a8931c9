"""core.collector: what has lived a second leaves the cycle collector's scans; its garbage is reclaimed in one go."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from core import collector, runtime


class Node:
    """A cycle: freed only by the cycle collector, never by reference counting."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def counters() -> Iterator[None]:
    names = ("collector_open", "collector_ended", "collector_last_reclaim", "collector_interval",
             "collector_ended_before", "collector_due_since")  # fmt: skip
    saved = [getattr(runtime, name) for name in names]
    # Whatever an earlier test in this worker froze (a server started in-process ticks the collector) is
    # thawed: each test counts the frozen objects from nothing.
    gc.unfreeze()
    runtime.collector_open = runtime.collector_ended = runtime.collector_ended_before = 0
    runtime.collector_last_reclaim, runtime.collector_interval = None, collector.MIN_INTERVAL
    runtime.collector_due_since = None
    yield
    for name, value in zip(names, saved, strict=True):
        setattr(runtime, name, value)
    gc.unfreeze()
    gc.collect()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr("core.collector.time.monotonic", lambda: now[0])
    return now


def frozen_cycle() -> weakref.ref[Node]:
    node = Node()
    ref = weakref.ref(node)
    collector.tick()
    del node
    return ref


def end_connections(count: int, still_open: int) -> None:
    runtime.collector_ended += count
    runtime.collector_open = still_open


def test_it_freezes_what_has_lived() -> None:
    assert collector.tick() == "froze"

    assert gc.get_freeze_count() > 0


def test_frozen_garbage_outlives_a_full_collection() -> None:
    ref = frozen_cycle()

    gc.collect()

    assert ref() is not None


def test_it_reclaims_once_ended_connections_outnumber_open_ones() -> None:
    ref = frozen_cycle()
    end_connections(collector.MIN_ENDED, still_open=collector.MIN_ENDED - 1)
    assert collector.tick() == "froze"  # they ended in this very second: more may be ending

    assert collector.tick() == "reclaimed"

    assert ref() is None
    assert runtime.collector_ended == 0
    assert gc.get_freeze_count() > 0  # what still lives is frozen again


def test_it_keeps_freezing_while_more_are_open_than_ended() -> None:
    ref = frozen_cycle()
    end_connections(collector.MIN_ENDED, still_open=collector.MIN_ENDED + 1)

    assert collector.tick() == "froze"

    assert ref() is not None
    assert runtime.collector_ended == collector.MIN_ENDED


def test_it_waits_for_enough_ended_connections_on_a_quiet_server() -> None:
    end_connections(collector.MIN_ENDED - 1, still_open=0)

    assert collector.tick() == "froze"


def test_a_reclaim_that_found_little_waits_twice_as_long_for_the_next(clock: list[float]) -> None:
    gc.collect()
    end_connections(collector.MIN_ENDED, still_open=0)
    collector.tick()  # the test process's objects, which all live on, frozen
    assert collector.tick() == "reclaimed"
    assert runtime.collector_interval == 2 * collector.MIN_INTERVAL

    clock[0] += collector.MIN_INTERVAL
    end_connections(collector.MIN_ENDED, still_open=0)
    collector.tick()
    assert collector.tick() == "froze"

    clock[0] += collector.MIN_INTERVAL
    assert collector.tick() == "reclaimed"
    assert runtime.collector_interval == 4 * collector.MIN_INTERVAL


def test_a_due_reclaim_waits_while_connections_keep_ending_but_not_for_ever(clock: list[float]) -> None:
    ref = frozen_cycle()
    for _ in range(int(collector.MAX_DELAY)):
        end_connections(collector.MIN_ENDED, still_open=0)
        assert collector.tick() == "froze"
        clock[0] += 1

    end_connections(collector.MIN_ENDED, still_open=0)
    assert collector.tick() == "reclaimed"
    assert ref() is None


def test_a_reclaim_that_found_much_brings_the_wait_back(clock: list[float]) -> None:
    runtime.collector_last_reclaim, runtime.collector_interval = clock[0] - 600, 600.0
    garbage = [Node() for _ in range(len(gc.get_objects()) // 5)]  # a fifth of what the process tracks
    end_connections(collector.MIN_ENDED, still_open=0)
    collector.tick()
    del garbage

    assert collector.tick() == "reclaimed"

    assert runtime.collector_interval == collector.MIN_INTERVAL


async def test_it_counts_open_connections_and_long_ones_that_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    seen_open = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen_open.append(runtime.collector_open)
        await asyncio.sleep(0)

    counted = collector.counting_connections(app)
    await counted({"type": "http"}, None, None)
    assert (seen_open, runtime.collector_open, runtime.collector_ended) == ([1], 0, 0)  # short: not counted

    monkeypatch.setattr(collector, "FREEZE_EVERY", 0.0)
    await counted({"type": "http"}, None, None)
    assert (runtime.collector_open, runtime.collector_ended) == (0, 1)


async def test_a_connection_that_fails_is_still_counted_as_closed() -> None:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        raise OSError("gone")

    with pytest.raises(OSError, match="gone"):
        await collector.counting_connections(app)({"type": "http"}, None, None)

    assert runtime.collector_open == 0


def test_it_can_be_turned_off(settings: Any) -> None:
    settings.HOOKBRIDGE_GC_FREEZE = False
    runtime.background_tasks.pop(collector.TASK, None)

    async def start() -> None:
        collector.ensure_running()

    asyncio.run(start())

    assert collector.TASK not in runtime.background_tasks


async def test_a_server_process_runs_it(settings: Any) -> None:
    settings.HOOKBRIDGE_GC_FREEZE = True
    runtime.background_tasks.pop(collector.TASK, None)

    collector.ensure_running()

    task = runtime.background_tasks.pop(collector.TASK)
    assert not task.done()
    task.cancel()
