"""Hook Bridge side by side with the floor and its peers, in one run: `make bench` (or python -m bench.compare).

    python -m bench.compare                          # 3 rounds of 20 questions, think 250 ms and 0
    python -m bench.compare --rounds 5 --questions 30
    python -m bench.compare --quick --name smoke     # the harness still works

Every system is started once; then the rounds go A B C … A B C …, so a system never gets a
quieter machine than another. In each round every system answers `--questions` questions one
after another, for each think time: the person finds the question, waits the think time
(250 ms: an idle server, as a person leaves it; 0: flat out), sends the answer, and the time
from sending it to the agent's tool call returning is the sample. The headline is each
system's median of its per-round p50s, with the spread across rounds, as a ratio to the
floor's (bench/floor.py: the same `mcp` SDK, the same answer POST and SQLite write).

Systems:
- floor: bench/floor.py under uvicorn, an agent over Streamable HTTP (2026-07-28);
- embedded: Hook Bridge on SQLite and its in-memory layer, one daphne worker;
- team: two daphne workers on PostgreSQL and Redis, asked on one and answered on the other
  (skipped when those are unreachable);
- stdio: `manage.py mcp_stdio` next to the embedded worker, answered on the worker's API;
- mcp-feedback-enhanced (when `make bench-peers` installed it): over stdio, answered over its
  page's WebSocket as the page does.

Also measured: a bare answer POST for an unknown question (a 404) on each HTTP system.
Writes bench/results/<name>.json and <name>.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from bench.report import RESULTS, table, write
from bench.servers import embedded, environment, raise_open_files_limit, team
from tests.live import ROOT, free_port
from tests.team import POSTGRES_URL, REDIS_URL, _reachable

PEERS = ROOT / "bench" / ".peers"
MFE = PEERS / "mcp-feedback-enhanced" / "bin" / "mcp-feedback-enhanced"
ANSWER = "ok"


@dataclass
class System:
    """One system as the harness drives it: an agent's call, and a person who finds and answers it."""

    name: str
    call: Callable[[str], Awaitable[None]]
    find: Callable[[str], Awaitable[Any]]
    send: Callable[[Any], Awaitable[None]]
    bare_404: Callable[[], Awaitable[int]] | None = None
    samples: dict[float, list[list[float]]] = field(default_factory=dict)  # think -> per round
    bare: list[list[float]] = field(default_factory=list)


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


# --- the systems ---------------------------------------------------------------------------


def _http(**headers: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120))


def _api_person(url: str, headers: dict[str, str], http: httpx2.AsyncClient) -> tuple[Any, Any, Any]:
    """A bot on a JSON API: polls the pending questions, posts the answer."""

    async def find(text: str) -> str:
        while True:
            listed = (await http.get(f"{url}/api/questions?status=pending", headers=headers)).json()["questions"]
            for question in listed:
                if question["question"] == text:
                    return str(question["id"])
            await asyncio.sleep(0.005)

    async def send(question_id: str) -> None:
        response = await http.post(
            f"{url}/api/mcp-answer", json={"questionId": question_id, "answer": ANSWER}, headers=headers
        )
        assert response.status_code == 200, response.text

    async def bare_404() -> int:
        response = await http.post(
            f"{url}/api/mcp-answer", json={"questionId": str(uuid.uuid4()), "answer": ANSWER}, headers=headers
        )
        return response.status_code

    return find, send, bare_404


async def _http_agent(stack: AsyncExitStack, url: str, headers: dict[str, str]) -> Callable[[str], Awaitable[None]]:
    http = await stack.enter_async_context(_http(**headers))
    client = await stack.enter_async_context(
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="2026-07-28")
    )

    async def call(text: str) -> None:
        result = await client.call_tool("ask_question", {"question": text})
        assert not result.is_error, result

    return call


@asynccontextmanager
async def floor_system() -> AsyncIterator[System]:
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        process = subprocess.Popen(  # noqa: ASYNC220  (started once, before anything is measured)
            [sys.executable, "-m", "bench.floor", "--port", str(port), "--database", f"{folder}/floor.sqlite3"],
            cwd=ROOT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            async with AsyncExitStack() as stack:
                person = await stack.enter_async_context(_http())
                for _ in range(100):
                    with contextlib.suppress(httpx2.HTTPError):
                        await person.get(f"{url}/api/questions")
                        break
                    await asyncio.sleep(0.1)
                find, send, bare_404 = _api_person(url, {}, person)
                yield System("floor", await _http_agent(stack, url, {}), find, send, bare_404)
        finally:
            process.terminate()
            process.wait(10)


@asynccontextmanager
async def hookbridge_systems(with_stdio: bool) -> AsyncIterator[list[System]]:
    with embedded() as setup:
        server = setup.agent_side
        async with AsyncExitStack() as stack:
            person = await stack.enter_async_context(_http())
            find, send, bare_404 = _api_person(server.url, server.auth("answer-bot"), person)
            systems = [System("embedded", await _http_agent(stack, server.url, server.auth()), find, send, bare_404)]
            if with_stdio:
                params = StdioServerParameters(
                    command=sys.executable,
                    args=["manage.py", "mcp_stdio", "--token", server.tokens["agent-b"]],
                    env=server.env,
                    cwd=str(ROOT),
                )
                errlog = stack.enter_context(tempfile.TemporaryFile("w+"))  # noqa: SIM115  (the stack closes it)
                client = await stack.enter_async_context(Client(stdio_client(params, errlog=errlog)))

                async def call(text: str) -> None:
                    result = await client.call_tool("ask_question", {"question": text})
                    assert not result.is_error, result

                systems.append(System("stdio", call, find, send))
            yield systems


@asynccontextmanager
async def team_system() -> AsyncIterator[System | None]:
    if not (_reachable(POSTGRES_URL, 5432) and _reachable(REDIS_URL, 6379)):
        print("team: skipped, PostgreSQL or Redis is unreachable", flush=True)
        yield None
        return
    with team() as setup:
        async with AsyncExitStack() as stack:
            person = await stack.enter_async_context(_http())
            answering = setup.answer_side
            find, send, bare_404 = _api_person(answering.url, answering.auth("answer-bot"), person)
            call = await _http_agent(stack, setup.agent_side.url, setup.agent_side.auth())
            yield System("team", call, find, send, bare_404)


@asynccontextmanager
async def feedback_enhanced() -> AsyncIterator[System | None]:
    """mcp-feedback-enhanced over stdio; the person is its page's WebSocket, kept open across questions."""
    if not MFE.exists():
        print("mcp-feedback-enhanced: skipped, run `make bench-peers` to install it", flush=True)
        yield None
        return
    import websockets

    port = free_port()
    env = {
        **os.environ,
        "MCP_WEB_HOST": "127.0.0.1",
        "MCP_WEB_PORT": str(port),
        "BROWSER": "true",  # webbrowser.open runs `true`: no browser on a bench machine
    }
    params = StdioServerParameters(command=str(MFE), args=["server"], env=env)
    summaries: asyncio.Queue[str] = asyncio.Queue()
    async with AsyncExitStack() as stack:
        errlog = stack.enter_context(tempfile.TemporaryFile("w+"))  # noqa: SIM115  (the stack closes it)
        client = await stack.enter_async_context(Client(stdio_client(params, errlog=errlog)))
        page: list[Any] = []

        async def call(text: str) -> None:
            await client.call_tool("interactive_feedback", {"summary": text, "timeout": 600})

        async def listen(socket: Any) -> None:
            async for raw in socket:
                message = json.loads(raw)
                if message.get("type") == "session_updated":
                    await summaries.put(message["session_info"]["summary"])

        async def find(text: str) -> None:
            if not page:  # the first question: its session exists once the page can connect
                url = f"ws://127.0.0.1:{port}/ws"
                while not page:
                    try:
                        socket = await websockets.connect(url, origin=f"http://127.0.0.1:{port}")  # type: ignore[arg-type]
                    except (OSError, websockets.InvalidStatus):
                        await asyncio.sleep(0.01)
                        continue
                    message = json.loads(await socket.recv())
                    if message.get("type") != "connection_established":
                        await socket.close()
                        await asyncio.sleep(0.01)
                        continue
                    page.append(socket)
                    stack.push_async_callback(socket.close)
                    listener = asyncio.create_task(listen(socket))
                    stack.callback(listener.cancel)
                return
            while (await summaries.get()) != text:
                pass

        async def send(_: None) -> None:
            await page[0].send(
                json.dumps({"type": "submit_feedback", "feedback": ANSWER, "images": [], "settings": {}})
            )

        yield System("mcp-feedback-enhanced", call, find, send)


# --- the run -------------------------------------------------------------------------------


def p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


async def measure(systems: list[System], rounds: int, questions: int, thinks: list[float], bare: int) -> None:
    for think in thinks:
        for system in systems:
            system.samples[think] = []
    for round_number in range(rounds):
        for think in thinks:
            for system in systems:
                taken = [await one_question(system, think, n) for n in range(questions)]
                system.samples[think].append(taken)
                print(
                    f"round {round_number + 1}, think {think * 1000:.0f} ms, {system.name}: p50 {p50(taken):.1f} ms",
                    flush=True,
                )
        for system in systems:
            if system.bare_404 is not None:
                times = []
                for _ in range(bare):
                    started = time.perf_counter()
                    assert await system.bare_404() == 404
                    times.append(time.perf_counter() - started)
                system.bare.append(times)


def summarise(systems: list[System], thinks: list[float]) -> dict[str, Any]:
    floor = systems[0]
    result: dict[str, Any] = {"answer": [], "bare_404": []}
    for think in thinks:
        floor_p50 = statistics.median(p50(r) for r in floor.samples[think])
        floor_p99 = statistics.median(p99(r) for r in floor.samples[think])
        for system in systems:
            per_round = [p50(r) for r in system.samples[think]]
            per_round_p99 = [p99(r) for r in system.samples[think]]
            median, tail = statistics.median(per_round), statistics.median(per_round_p99)
            result["answer"].append(
                {
                    "system": system.name,
                    "think_ms": round(think * 1000),
                    "p50_ms": round(median, 2),
                    "p50_spread_ms": [round(min(per_round), 2), round(max(per_round), 2)],
                    "p99_ms": round(tail, 2),
                    "x_floor_p50": round(median / floor_p50, 2),
                    "x_floor_p99": round(tail / floor_p99, 2),
                }
            )
    floor_bare = statistics.median(p50(r) for r in floor.bare) if floor.bare else None
    for system in systems:
        if system.bare:
            bare_p50s = [p50(r) for r in system.bare]
            median = statistics.median(bare_p50s)
            result["bare_404"].append(
                {
                    "system": system.name,
                    "p50_ms": round(median, 2),
                    "p50_spread_ms": [
                        round(min(p50(r) for r in system.bare), 2),
                        round(max(p50(r) for r in system.bare), 2),
                    ],
                    "x_floor": round(median / floor_bare, 2) if floor_bare else None,
                }
            )
    peer = next((s for s in systems if s.name == "mcp-feedback-enhanced"), None)
    stdio = next((s for s in systems if s.name == "stdio"), None)
    if peer and stdio:
        result["stdio_vs_peer"] = {
            f"think {round(think * 1000)} ms": round(
                statistics.median(p50(r) for r in stdio.samples[think])
                / statistics.median(p50(r) for r in peer.samples[think]),
                2,
            )
            for think in thinks
        }
    return result


def markdown(result: dict[str, Any]) -> str:
    answer_rows = [
        {
            "system": row["system"],
            "think ms": row["think_ms"],
            "x floor p50": row["x_floor_p50"],
            "x floor p99": row["x_floor_p99"],
            "p50 ms": row["p50_ms"],
            "p50 across rounds ms": f"{row['p50_spread_ms'][0]}-{row['p50_spread_ms'][1]}",
            "p99 ms": row["p99_ms"],
        }
        for row in result["figures"]["answer"]
    ]
    bare_rows = [
        {
            "system": row["system"],
            "x floor": row["x_floor"],
            "p50 ms": row["p50_ms"],
            "p50 across rounds ms": f"{row['p50_spread_ms'][0]}-{row['p50_spread_ms'][1]}",
        }
        for row in result["figures"]["bare_404"]
    ]
    plan = result["plan"]
    parts = [
        f"# Side by side: {result['name']}\n",
        f"Taken {result['taken_at']} on {result['machine']}; {plan['rounds']} interleaved rounds of "
        f"{plan['questions']} questions per system and think time.\n",
        f"\n## Answer sent → tool call returned\n\n{table(answer_rows)}",
        f"\n## A bare answer POST for an unknown question (404)\n\n{table(bare_rows)}",
    ]
    if "stdio_vs_peer" in result["figures"]:
        ratios = ", ".join(f"{k}: {v}x" for k, v in result["figures"]["stdio_vs_peer"].items())
        parts.append(f"\nHook Bridge over stdio / mcp-feedback-enhanced, p50: {ratios}.\n")
    return "".join(parts)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    thinks = [args.think / 1000, 0.0]
    async with AsyncExitStack() as stack:
        systems = [await stack.enter_async_context(floor_system())]
        systems += await stack.enter_async_context(hookbridge_systems(with_stdio=True))
        for extra in (team_system(), feedback_enhanced()):
            system = await stack.enter_async_context(extra)
            if system is not None:
                systems.append(system)
        await measure(systems, args.rounds, args.questions, thinks, args.bare)
        return summarise(systems, thinks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--questions", type=int, default=20, help="per system, think time and round")
    parser.add_argument("--think", type=float, default=250.0, help="ms before each answer (0 is measured too)")
    parser.add_argument("--bare", type=int, default=100, help="bare 404 answer POSTs per system and round")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 3: the harness still works")
    parser.add_argument("--name", default=None)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.questions, args.bare = 2, 3, 10
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hookbridge_site.settings")
    raise_open_files_limit()
    name = args.name or ("compare-quick" if args.quick else "compare")
    started = time.monotonic()
    figures = asyncio.run(run(args))
    result = {
        "name": name,
        "taken_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": environment(),
        "plan": {"rounds": args.rounds, "questions": args.questions, "think_ms": args.think, "bare": args.bare},
        "figures": figures,
        "seconds": round(time.monotonic() - started, 1),
    }
    report = markdown(result)
    print(report, flush=True)
    for path in write(name, result, report, args.out):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
