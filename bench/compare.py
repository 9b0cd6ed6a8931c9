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
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from bench import failures, load
from bench.report import RESULTS, table, write
from bench.servers import Setup, agent, embedded, environment, raise_open_files_limit, rss_bytes, rss_of, team
from bench.system import System, one_question
from testing.live import ROOT, free_port
from testing.team import POSTGRES_URL, REDIS_URL, reachable

PEERS = ROOT / "bench" / ".peers"
MFE = PEERS / "mcp-feedback-enhanced" / "bin" / "mcp-feedback-enhanced"
ANSWER = "ok"
# The measurements under load hold hundreds of calls from one agent's token: past the per-token cap
# (HOOKBRIDGE_MAX_WAITING_PER_TOKEN, 100 by default) they were refused, and the held count never came.
HELD_ENV = {"HOOKBRIDGE_MAX_WAITING_PER_TOKEN": "100000"}


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


def _client(url: str, http: httpx2.AsyncClient) -> Client:
    return Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="2026-07-28")


async def _http_agent(stack: AsyncExitStack, url: str, headers: dict[str, str]) -> Callable[[str], Awaitable[None]]:
    http = await stack.enter_async_context(_http(**headers))
    client = await stack.enter_async_context(_client(url, http))

    async def call(text: str) -> None:
        result = await client.call_tool("ask_question", {"question": text})
        assert not result.is_error, result

    return call


async def _event(client: Client, n: int) -> None:
    result = await client.call_tool("submit_lifecycle_event", {"event_type": "task-started", "phase_name": f"ev{n}"})
    assert not result.is_error, result


def _hookbridge_load(setup: Setup) -> dict[str, Any]:
    """What the measurements under load need of a Hook Bridge setup: agents on one worker, its memory, its queue."""

    async def pending() -> int:
        return await asyncio.to_thread(setup.count_pending)

    async def forget(prefix: str) -> None:
        await asyncio.to_thread(setup.forget_pending, prefix)

    return {
        "agent": lambda: agent(setup.agent_side),
        "event": _event,
        "pending": pending,
        "rss": lambda: rss_bytes(setup.agent_side),
        "forget": forget,
    }


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

                @asynccontextmanager
                async def floor_agent() -> AsyncIterator[Client]:
                    async with _http() as http, _client(url, http) as client:
                        yield client

                async def pending() -> int:
                    return len((await person.get(f"{url}/api/questions")).json()["questions"])

                yield System(
                    "floor",
                    await _http_agent(stack, url, {}),
                    find,
                    send,
                    bare_404,
                    agent=floor_agent,
                    event=_event,
                    pending=pending,
                    rss=lambda: rss_of(process.pid),
                )
        finally:
            process.terminate()
            process.wait(10)


@asynccontextmanager
async def hookbridge_systems(
    with_stdio: bool, root: Path = ROOT, name: str = "embedded"
) -> AsyncIterator[list[System]]:
    """Hook Bridge embedded (and over stdio), from this checkout or from `root` (a baseline's worktree)."""
    with embedded(root, **HELD_ENV) as setup:
        server = setup.agent_side
        async with AsyncExitStack() as stack:
            person = await stack.enter_async_context(_http())
            find, send, bare_404 = _api_person(server.url, server.auth("answer-bot"), person)
            call = await _http_agent(stack, server.url, server.auth())
            systems = [System(name, call, find, send, bare_404, **_hookbridge_load(setup))]
            if with_stdio:
                params = StdioServerParameters(
                    command=sys.executable,
                    args=["manage.py", "mcp_stdio", "--token", server.tokens["agent-b"]],
                    env=server.env,
                    cwd=str(root),
                )
                errlog = stack.enter_context(tempfile.TemporaryFile("w+"))  # noqa: SIM115  (the stack closes it)
                client = await stack.enter_async_context(Client(stdio_client(params, errlog=errlog)))

                async def call(text: str) -> None:
                    result = await client.call_tool("ask_question", {"question": text})
                    assert not result.is_error, result

                systems.append(System(name.replace("embedded", "stdio"), call, find, send))
            yield systems


@asynccontextmanager
async def team_system() -> AsyncIterator[System | None]:
    if not (reachable(POSTGRES_URL, 5432) and reachable(REDIS_URL, 6379)):
        print("team: skipped, PostgreSQL or Redis is unreachable", flush=True)
        yield None
        return
    with team(**HELD_ENV) as setup:
        async with AsyncExitStack() as stack:
            person = await stack.enter_async_context(_http())
            answering = setup.answer_side
            find, send, bare_404 = _api_person(answering.url, answering.auth("answer-bot"), person)
            call = await _http_agent(stack, setup.agent_side.url, setup.agent_side.auth())
            yield System("team", call, find, send, bare_404, **_hookbridge_load(setup))


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


def across(spread: list[float]) -> str:
    """The lowest and highest of the rounds' figures, as a table cell."""
    return f"{spread[0]}-{spread[1]}"


def markdown(result: dict[str, Any]) -> str:
    answer_rows = [
        {
            "system": row["system"],
            "think ms": row["think_ms"],
            "x floor p50": row["x_floor_p50"],
            "x floor p99": row["x_floor_p99"],
            "p50 ms": row["p50_ms"],
            "p50 across rounds ms": across(row["p50_spread_ms"]),
            "p99 ms": row["p99_ms"],
        }
        for row in result["figures"]["answer"]
    ]
    bare_rows = [
        {
            "system": row["system"],
            "x floor": row["x_floor"],
            "p50 ms": row["p50_ms"],
            "p50 across rounds ms": across(row["p50_spread_ms"]),
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
    figures = result["figures"]
    if "stdio_vs_peer" in figures:
        ratios = ", ".join(f"{k}: {v}x" for k, v in figures["stdio_vs_peer"].items())
        parts.append(f"\nHook Bridge over stdio / mcp-feedback-enhanced, p50: {ratios}.\n")
    if figures.get("events"):
        rows = [
            {
                "system": r["system"],
                "x floor": r["x_floor"],
                "events per second": r["per_second"],
                "across rounds": across(r["spread"]),
            }
            for r in figures["events"]
        ]
        parts.append(
            f"\n## Lifecycle events flat out ({plan['event_agents']} agents, {plan['events_seconds']} s a round)\n\n"
            f"The floor's is its `submit_lifecycle_event`: the same SDK round trip and one SQLite write.\n\n"
            f"{table(rows)}"
        )
    if figures.get("held"):
        rows = [
            {
                "system": r["system"],
                "held": r["count"],
                "open s": r["open_s"],
                "open x floor": r["open_x_floor"],
                "KiB per call": r["kib_per_call"],
                "KiB x floor": r["kib_x_floor"],
                "answer p50 ms alone": r["alone_p50_ms"],
                "while held": r["held_p50_ms"],
                "held x alone": r["held_x_alone"],
                "all hung up: let go in s": r["release_s"],
            }
            for r in figures["held"]
        ]
        parts.append(
            "\n## Calls held at once (one worker)\n\nKiB per call: the worker's RSS growth in the first round, "
            "while it first holds that many (a worker keeps the memory it freed for the next rounds' calls). "
            f"The other figures are medians across rounds.\n\n{table(rows)}"
        )
    if figures.get("hangup"):
        rows = [
            {"system": r["system"], "hung up at once": r["count"], "let go in s": r["release_s"]}
            for r in figures["hangup"]
        ]
        parts.append(f"\n## A mass hang-up\n\n{table(rows)}")
    if figures.get("fanout"):
        rows = [
            {
                "database": r["database"],
                "x fresh": r["x_fresh"],
                "new question → first dashboard p50 ms": r["first_dashboard_p50_ms"],
                "across rounds": across(r["spread"]),
            }
            for r in figures["fanout"]
        ]
        parts.append(f"\n## Fan-out against history (embedded, two workers in alternation)\n\n{table(rows)}")
    if figures.get("targets"):
        parts.append(f"\n## Against issue 19's targets\n\n{table(figures['targets'])}")
    return "".join(parts)


async def measure_load(systems: list[System], args: argparse.Namespace) -> dict[str, Any]:
    """Events and held calls in interleaved rounds, then one mass hang-up and the fan-out pair."""
    loaded = [system for system in systems if system.agent is not None]
    for round_number in range(args.rounds):
        for system in loaded if args.events_seconds else []:
            row = await load.events(system, args.event_agents, args.events_seconds)
            system.load.setdefault("events", []).append(row)
            print(f"round {round_number + 1}, events, {system.name}: {row['per_second']:.0f}/s", flush=True)
        for system in loaded if args.held else []:
            row = await load.held(system, args.held, args.sample)
            system.load.setdefault("held", []).append(row)
            print(
                f"round {round_number + 1}, {args.held} held, {system.name}: opened in {row['open_s']:.2f} s, "
                f"{row['kib_per_call']:.1f} KiB each, answer {row['alone_p50_ms']:.1f} -> {row['held_p50_ms']:.1f} ms, "
                f"let go in {row['release_s']:.2f} s",
                flush=True,
            )
    hangups = []
    for system in loaded if args.hangup else []:
        if system.name in ("floor", "embedded"):
            row = await load.held(system, args.hangup, 3)
            hangups.append({"system": system.name, "count": args.hangup, "release_s": round(row["release_s"], 2)})
            print(f"{args.hangup} hung up at once, {system.name}: let go in {row['release_s']:.2f} s", flush=True)
    fanout: dict[str, list[float]] = {}
    if args.fanout:
        async with load.fanout_pair(args.history) as pair:
            for round_number in range(args.rounds):
                for label in pair.sides:
                    taken = [await pair.one(label, n) for n in range(args.fanout)]
                    fanout.setdefault(label, []).append(p50(taken))
                    print(
                        f"round {round_number + 1}, fan-out, {label}: first dashboard {p50(taken):.1f} ms", flush=True
                    )
    return {"hangup": hangups, "fanout": fanout}


def summarise_load(systems: list[System], extra: dict[str, Any]) -> dict[str, Any]:
    def median(rows: list[dict[str, Any]], key: str) -> float:
        return float(statistics.median(row[key] for row in rows))

    floor = systems[0].load
    result: dict[str, Any] = {"events": [], "held": [], "hangup": extra["hangup"], "fanout": []}
    for system in systems:
        if rows := system.load.get("events"):
            rate = median(rows, "per_second")
            result["events"].append(
                {
                    "system": system.name,
                    "per_second": round(rate, 1),
                    "spread": [
                        round(min(r["per_second"] for r in rows), 1),
                        round(max(r["per_second"] for r in rows), 1),
                    ],
                    "x_floor": round(rate / median(floor["events"], "per_second"), 2),
                }
            )
        if rows := system.load.get("held"):
            figures = {key: median(rows, key) for key in ("open_s", "alone_p50_ms", "held_p50_ms")}
            # Memory from the first round only: a worker keeps what it freed for the next round's calls.
            figures["kib_per_call"] = rows[0]["kib_per_call"]
            result["held"].append(
                {
                    "system": system.name,
                    "count": rows[0]["count"],
                    **{key: round(value, 2) for key, value in figures.items()},
                    "release_s": round(median(rows, "release_s"), 2),
                    "open_x_floor": round(figures["open_s"] / median(floor["held"], "open_s"), 2),
                    "kib_x_floor": round(figures["kib_per_call"] / floor["held"][0]["kib_per_call"], 2),
                    "held_x_alone": round(figures["held_p50_ms"] / figures["alone_p50_ms"], 2),
                }
            )
    fresh = None
    for label, per_round in extra["fanout"].items():
        value = statistics.median(per_round)
        fresh = fresh or value
        result["fanout"].append(
            {
                "database": label,
                "first_dashboard_p50_ms": round(value, 2),
                "spread": [round(min(per_round), 2), round(max(per_round), 2)],
                "x_fresh": round(value / fresh, 2),
            }
        )
    return result


def targets(figures: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 19's targets, each against this run's figure."""
    rows: list[dict[str, Any]] = []

    def check(target: str, value: float | None, limit: float, at_least: bool = False) -> None:
        if value is None:
            rows.append({"target": target, "figure": "not measured", "result": ""})
            return
        met = value >= limit if at_least else value <= limit
        rows.append({"target": target, "figure": value, "result": "met" if met else "missed"})

    def answer(system: str, key: str) -> float | None:
        return next(
            (r[key] for r in figures["answer"] if r["system"] == system and r["think_ms"] > 0),
            None,
        )

    def of(section: str, system: str, key: str) -> float | None:
        return next((r[key] for r in figures.get(section, []) if r.get("system") == system), None)

    check("embedded answer p50 ≤ 1.5x floor", answer("embedded", "x_floor_p50"), 1.5)
    check("embedded answer p99 ≤ 3x floor", answer("embedded", "x_floor_p99"), 3)
    check("team answer p50 ≤ 2.5x floor", answer("team", "x_floor_p50"), 2.5)
    check("bare 404 ≤ 2x floor", of("bare_404", "embedded", "x_floor"), 2)
    stdio = figures.get("stdio_vs_peer") or {}
    check("stdio p50 ≤ 1.5x mcp-feedback-enhanced", next(iter(stdio.values()), None), 1.5)
    check("lifecycle events ≥ 0.6x floor", of("events", "embedded", "x_floor"), 0.6, at_least=True)
    check("RSS per held call ≤ 1.3x floor", of("held", "embedded", "kib_x_floor"), 1.3)
    check("opening the held calls ≤ 2x floor", of("held", "embedded", "open_x_floor"), 2)
    check("answer p50 with calls held ≤ 2x alone", of("held", "embedded", "held_x_alone"), 2)
    hangup = next((r for r in figures.get("hangup", []) if r["system"] == "embedded"), None)
    check(
        f"{hangup['count'] if hangup else 2000:,} hung up at once: let go within 2 s",
        hangup["release_s"] if hangup else None,
        2,
    )
    fanout = figures.get("fanout") or []
    check("fan-out after history ≈ fresh (≤ 1.25x)", fanout[-1]["x_fresh"] if len(fanout) > 1 else None, 1.25)
    return rows


async def run(args: argparse.Namespace) -> dict[str, Any]:
    thinks = [args.think / 1000, 0.0]
    async with AsyncExitStack() as stack:
        systems = [await stack.enter_async_context(floor_system())]
        systems += await stack.enter_async_context(hookbridge_systems(with_stdio=args.stdio))
        if args.baseline is not None:
            # The same code before a change, interleaved with it: a re-cut shows what it cost, round by round. With
            # its own stdio process beside it, as the embedded worker has: that process hears every group message
            # the worker sends (core.local_layer), and a baseline without one measured 10-20% faster for it alone.
            name = f"embedded@{args.baseline_name}"
            systems += await stack.enter_async_context(hookbridge_systems(args.stdio, args.baseline, name))
        for extra in (team_system(), feedback_enhanced()):
            system = await stack.enter_async_context(extra)
            if system is not None:
                systems.append(system)
        await measure(systems, args.rounds, args.questions, thinks, args.bare)
        under_load = await measure_load(systems, args)
        figures = summarise(systems, thinks)
        figures.update(summarise_load(systems, under_load))
        figures["targets"] = targets(figures)
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--questions", type=int, default=20, help="per system, think time and round")
    parser.add_argument("--think", type=float, default=250.0, help="ms before each answer (0 is measured too)")
    parser.add_argument("--bare", type=int, default=100, help="bare 404 answer POSTs per system and round")
    parser.add_argument("--event-agents", type=int, default=10, help="agents sending lifecycle events flat out")
    parser.add_argument("--events-seconds", type=float, default=3.0, help="per system and round (0: skip)")
    parser.add_argument("--held", type=int, default=500, help="calls held at once per system and round (0: skip)")
    parser.add_argument("--sample", type=int, default=20, help="answers timed alone and with the calls held")
    parser.add_argument("--hangup", type=int, default=2000, help="calls hung up at once, once (0: skip)")
    parser.add_argument("--history", type=int, default=10_000, help="answered questions behind the fan-out")
    parser.add_argument("--fanout", type=int, default=20, help="new questions per database and round (0: skip)")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 3: the harness still works")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="another checkout (git worktree add DIR REV) measured as one more system, side by side",
    )
    parser.add_argument("--baseline-name", default="baseline", help="how the baseline is named in the tables")
    parser.add_argument(
        "--no-stdio",
        dest="stdio",
        action="store_false",
        help="no agent over stdio beside the embedded worker (which then has no other local process to tell)",
    )
    parser.add_argument("--name", default=None)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.questions, args.bare = 2, 3, 10
        args.event_agents, args.events_seconds, args.held, args.sample = 2, 0.5, 20, 3
        args.hangup, args.history, args.fanout = 30, 50, 3
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hookbridge_site.settings")
    raise_open_files_limit()
    name = args.name or ("compare-quick" if args.quick else "compare")
    started = time.monotonic()
    figures = asyncio.run(run(args))
    result = {
        "name": name,
        "taken_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": environment(),
        "plan": {
            key: str(value) if isinstance(value, Path) else value
            for key, value in vars(args).items()
            if key not in ("out", "name", "quick")
        },
        "figures": figures,
        "seconds": round(time.monotonic() - started, 1),
    }
    report = markdown(result)
    print(report, flush=True)
    for path in write(name, result, report, args.out):
        print(f"wrote {path}")


if __name__ == "__main__":
    failures.reporting("bench.compare", main)
