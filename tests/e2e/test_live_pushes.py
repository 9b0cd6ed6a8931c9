"""A burst of lifecycle events, over real HTTP MCP, reaches an open dashboard as a few pushes ending current."""

from __future__ import annotations

import asyncio
import re
import time
import uuid

from mcp import Client

from core.broadcast import LATEST_INTERVAL
from testing.live import LiveServer


async def test_a_burst_of_events_ends_with_the_dashboard_showing_the_last(live_server_proc: LiveServer) -> None:
    tag = uuid.uuid4().hex[:8]
    bars: list[str] = []
    ended = asyncio.Event()
    async with live_server_proc.login() as http, live_server_proc.socket("/ws/dashboard/", http) as dashboard:
        await dashboard.recv()  # the current state

        async def watch() -> None:
            async for message in dashboard:
                if 'id="status-bar"' in str(message):
                    bars.append(str(message))
                    if f"{tag}-end" in bars[-1]:
                        ended.set()

        watcher = asyncio.create_task(watch())
        end = {"event_type": "task-completed", "phase_name": f"{tag}-end"}
        async with live_server_proc.mcp("legacy") as first, live_server_proc.mcp("2026-07-28") as second:

            async def submit(client: Client, side: str) -> None:
                for n in range(20):
                    await client.call_tool(
                        "submit_lifecycle_event", {"event_type": "task-started", "phase_name": f"{tag}-{side}-{n}"}
                    )

            started = time.monotonic()
            await asyncio.gather(submit(first, "a"), submit(second, "b"))
            await first.call_tool("submit_lifecycle_event", end)
        async with asyncio.timeout(30):
            await ended.wait()
        # From the first event to the last push: on a loaded machine the pushes go on while the calls return.
        elapsed = time.monotonic() - started
        await asyncio.sleep(3 * LATEST_INTERVAL)  # nothing older may follow the last
        watcher.cancel()
    assert f"{tag}-end" in bars[-1]
    assert "Task completed" in bars[-1]
    # At most one push per interval, plus the first and the trailing one: 41 events were not 41 pushes.
    assert len(bars) <= elapsed / LATEST_INTERVAL + 3, (len(bars), elapsed)
    shown = [int(n) for bar in bars for n in re.findall(rf"{tag}-[ab]-(\d+)", bar)]
    assert len(shown) < 40, (len(bars), elapsed)
