"""One system as the side-by-side harness drives it (bench/compare.py), and one timed question on it."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from mcp import Client

AgentFactory = Callable[[], AbstractAsyncContextManager[Client]]


@dataclass
class System:
    """One system as the harness drives it: an agent's call, and a person who finds and answers it."""

    name: str
    call: Callable[[str], Awaitable[None]]
    find: Callable[[str], Awaitable[Any]]
    send: Callable[[Any], Awaitable[None]]
    bare_404: Callable[[], Awaitable[int]] | None = None
    # For the measurements under load (bench/load.py); HTTP systems only.
    agent: AgentFactory | None = None  # one more agent, with a connection pool of its own
    event: Callable[[Client, int], Awaitable[None]] | None = None  # one lifecycle event
    pending: Callable[[], Awaitable[int]] | None = None  # calls the server holds (not those it let go)
    rss: Callable[[], int] | None = None  # the worker's resident memory, in bytes
    forget: Callable[[str], Awaitable[None]] | None = None  # drop a finished run's questions from the queue
    samples: dict[float, list[list[float]]] = field(default_factory=dict)  # think -> per round
    bare: list[list[float]] = field(default_factory=list)
    load: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # measurement -> per round


async def one_question(system: System, think: float, n: int) -> float:
    text = f"compare {uuid.uuid4().hex[:8]}: question {n}. Which way?"
    returned = asyncio.get_running_loop().create_future()

    async def agent() -> None:
        await system.call(text)
        returned.set_result(time.perf_counter())

    call = asyncio.create_task(agent())
    try:
        handle = await asyncio.wait_for(system.find(text), 30)
        await asyncio.sleep(think)
        sent = time.perf_counter()
        await system.send(handle)
        await asyncio.wait_for(call, 30)
    finally:
        call.cancel()
    return float(returned.result()) - sent
