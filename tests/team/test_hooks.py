"""Hook runs in team mode: two daphne workers sharing the real PostgreSQL and Redis.

Needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379 (see testing/team.py).
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.hook_world import HookWorld, call, gone_within, wait_for_file
from testing.live import LiveServer, receive_until
from testing.team import two_workers


@pytest.fixture(scope="module")
def world_and_workers() -> Iterator[tuple[HookWorld, LiveServer, LiveServer]]:
    with tempfile.TemporaryDirectory(prefix="hookbridge-team-hooks-") as base:
        world = HookWorld(Path(base))
        with two_workers(
            HOOKBRIDGE_PLUGINS_DIR=str(world.plugins),
            HOOKBRIDGE_WORKSPACE=str(world.workspace),
            HOOK_TEST_LOG=str(world.log),
            HOOK_TEST_PIDS=str(world.pids),
        ) as (first, second):
            yield world, first, second


async def test_a_run_on_one_worker_blocks_the_folder_on_the_other_and_shows_on_its_dashboard(
    world_and_workers: tuple[HookWorld, LiveServer, LiveServer],
) -> None:
    world, worker_a, worker_b = world_and_workers
    async with worker_b.login() as browser, worker_b.dashboard_socket(browser) as dashboard:
        await receive_until(dashboard, 'id="hook-runs"')
        slow = asyncio.create_task(call(worker_a, "do_shell_slow"))
        child = int(await wait_for_file(world.pids / "slow.pid"))
        started = await receive_until(dashboard, 'hx-swap-oob="afterbegin:#hook-runs"')  # through Redis
        assert "Slow Shell" in started
        assert 'data-status="running"' in started
        run_id = re.search(r'id="hook-run-([0-9a-f-]+)"', started)
        assert run_id

        # The one-run-per-folder limit is a PostgreSQL constraint: it holds on the other worker too.
        is_error, text, _ = await call(worker_b, "do_shell_slow")
        assert is_error
        assert "do_shell_slow is already running in '.'" in text

        slow.cancel()
        await asyncio.gather(slow, return_exceptions=True)
        assert await gone_within(child)
        finished = await receive_until(dashboard, f'id="hook-run-{run_id.group(1)}" class="hook-run status-cancelled"')
        assert 'data-status="cancelled"' in finished

    # The folder is free again, for either worker.
    is_error, _, data = await call(worker_b, "do_shell_whereami")
    assert not is_error
    assert data["status"] == "passed"
