"""The side-by-side measurements under load, for bench/compare.py: events, held calls, hang-ups, fan-out.

Each takes a system as compare.py drives it and returns one round's figures, so the
caller can interleave the systems round by round:

- `events`: lifecycle events flat out from `agents` agents for `seconds`; the floor runs its
  equivalent tool (the same SDK round trip and one SQLite write);
- `held`: `count` ask_question calls held at once: the time to open them, the server's RSS per
  held call, an answer's latency while they wait against alone, and, once every agent hangs
  up, how long until the server has let go of every call (Hook Bridge: marked as left);
- `fanout`: a new question until the first dashboard has it, on a fresh database and on one
  with `history` answered questions, two embedded workers measured in alternation.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from websockets.asyncio.client import ClientConnection

from bench.scenarios import dashboards
from bench.servers import embedded
from bench.system import System, one_question

# Calls opened together before waiting for the server to hold them all: agents arrive over
# time, and thousands of connections at once overflow a listen backlog (Twisted's is 50).
BATCH = 100


def ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000 if samples else float("nan")


async def until(condition: Callable[[], Awaitable[bool]], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not await condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout} s")
        await asyncio.sleep(0.02)


async def events(system: System, agents: int, seconds: float) -> dict[str, Any]:
    """Lifecycle events per second, flat out, with `agents` agents calling one after another."""
    assert system.agent is not None
    assert system.event is not None
    event = system.event
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(system.agent()) for _ in range(agents)]
        await asyncio.gather(*(event(client, -1) for client in clients))  # connections open, code warm
        counter = iter(range(10**9))
        stop_at = time.perf_counter() + seconds

        async def submit(client: Client) -> int:
            done = 0
            while time.perf_counter() < stop_at:
                await event(client, next(counter))
                done += 1
            return done

        started = time.perf_counter()
        sent = sum(await asyncio.gather(*(submit(client) for client in clients)))
        elapsed = time.perf_counter() - started
    return {"events": sent, "per_second": sent / elapsed}


async def held(system: System, count: int, sample: int) -> dict[str, Any]:
    """`count` calls held at once on one worker: cost to open and hold them, an answer meanwhile, a mass hang-up."""
    assert system.agent is not None
    assert system.pending is not None
    assert system.rss is not None
    pending, rss = system.pending, system.rss
    alone = [await one_question(system, 0.0, n) for n in range(sample)]
    base = await pending()
    tag = uuid.uuid4().hex[:6]
    async with AsyncExitStack() as stack:
        # One agent per 100 calls: each call is its own POST and SSE stream on the agent's pool.
        clients = [await stack.enter_async_context(system.agent()) for _ in range(max(1, count // BATCH))]
        await asyncio.sleep(0.5)
        rss_before = rss()
        tasks: list[asyncio.Task[Any]] = []
        started = time.perf_counter()
        for start in range(0, count, BATCH):
            stop = min(count, start + BATCH)
            for i in range(start, stop):
                client = clients[i % len(clients)]
                tasks.append(asyncio.create_task(client.call_tool("ask_question", {"question": f"held {tag} {i}"})))

            async def all_held(stop: int = stop) -> bool:
                # A call that ends while it should be held was refused (a cap, an error): say so now.
                if ended := [task for task in tasks if task.done()]:
                    said = ended[0].exception() or ended[0].result()
                    raise RuntimeError(
                        f"{system.name}: {len(ended)} held calls ended early, the first with {said!r:.300}"
                    )
                return await pending() >= base + stop

            await until(all_held, 120, f"{system.name}: holding {stop} calls")
        open_seconds = time.perf_counter() - started
        await asyncio.sleep(1)  # allocations settle
        rss_after = rss()
        loaded = [await one_question(system, 0.0, n) for n in range(sample)]
        # Every agent hangs up at once (a network cut, laptops closed): until the server has let go of each call.
        hung_up = time.perf_counter()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

        async def let_go() -> bool:
            return await pending() <= base

        await until(let_go, 300, f"{system.name}: letting go of {count} calls")
        release_seconds = time.perf_counter() - hung_up
    if system.forget is not None:
        await system.forget(f"held {tag} ")
    return {
        "count": count,
        "open_s": open_seconds,
        "kib_per_call": (rss_after - rss_before) / count / 1024,
        "alone_p50_ms": ms(alone),
        "held_p50_ms": ms(loaded),
        "release_s": release_seconds,
    }


HISTORY_SQL = """
from django.utils import timezone
from questions.models import Answer, Question, Status
from tokens.models import AgentToken
token = AgentToken.objects.get(name="agent-a")
now = timezone.now()
questions = [
    Question(text=f"history {i}: which way?", asker=token, asker_name=token.name, status=Status.ANSWERED,
             fingerprint=f"{i:064x}", resolved_at=now, delivered_at=now)
    for i in range({count})
]
Question.objects.bulk_create(questions, batch_size=500)
Answer.objects.bulk_create([Answer(question=q, text="ok", answered_by="alice") for q in questions], batch_size=500)
"""


class FanoutPair:
    """Two embedded workers, one fresh and one with history, each with a dashboard and an agent."""

    def __init__(self) -> None:
        self.sides: dict[str, tuple[Any, ClientConnection, Client, httpx2.AsyncClient]] = {}

    async def one(self, label: str, n: int) -> float:
        setup, socket, client, bot = self.sides[label]
        text = f"fan-out {uuid.uuid4().hex[:8]} {n}"
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        started = time.perf_counter()
        try:
            while text not in str(await asyncio.wait_for(socket.recv(), 30)):
                pass
            first = time.perf_counter() - started
            listed = (await bot.get(f"{setup.agent_side.url}/api/questions?status=pending&limit=5")).json()
            [qid] = [q["id"] for q in listed["questions"] if q["question"] == text]
            answered = await bot.post(
                f"{setup.agent_side.url}/api/mcp-answer", json={"questionId": qid, "answer": "ok"}
            )
            assert answered.status_code == 200, answered.text
            await asyncio.wait_for(call, 30)
        finally:
            call.cancel()
        # The answer's own pushes reach the dashboard too: read them before the next question.
        await asyncio.sleep(0.05)
        return first


@asynccontextmanager
async def fanout_pair(history: int) -> AsyncIterator[FanoutPair]:
    from bench.servers import agent

    pair = FanoutPair()
    with embedded() as fresh, embedded() as old:
        await asyncio.to_thread(old.agent_side.manage, "shell", "-c", HISTORY_SQL.replace("{count}", str(history)))
        async with AsyncExitStack() as stack:
            for label, setup in (("fresh", fresh), (f"after {history:,} questions", old)):
                (socket,) = await stack.enter_async_context(dashboards(setup.answer_side, 1))
                client = await stack.enter_async_context(agent(setup.agent_side))
                bot = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=setup.answer_side.auth("answer-bot"), timeout=30)
                )
                pair.sides[label] = (setup, socket, client, bot)
            for label in pair.sides:  # warm: templates compiled, connections open
                await pair.one(label, -1)
            yield pair
