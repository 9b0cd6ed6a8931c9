"""Fifty busy agents on one worker (issue 27, point 3), side by side with the floor: `make bench`, or

    python -m bench.agents                          # 5,000 calls from 50 tokens at 100/s, then 1,000 at once
    python -m bench.agents --quick --name agents-smoke

For each system (the floor: the same SDK's least server; Hook Bridge embedded; Hook Bridge in
team mode, its agents on one of two workers), one after the other in each round:

1. `calls` ask_question calls from `tokens` tokens (100 each: HOOKBRIDGE_MAX_WAITING_PER_TOKEN),
   opened at `rate` per second, each with a progress token as hosts send it, each kept waiting.
   Per call: the time from its request to its response headers.
2. While all are held: an unrelated question asked and answered (answer POST sent until the call
   returns), and the JSON API's pending page read back to back (its p99).
3. Every agent hangs up at once: how long the worker takes to answer a request, probed every 50 ms,
   and (Hook Bridge) until every question is marked as left.
4. `burst` calls opened all at once: the slowest call's response headers; hung up again.

The agents are raw HTTP streams (the SDK's own wire format, the handshake era without a session,
as a stateless client sends it), so that the time to the response headers is measured exactly; the
floor and Hook Bridge get the same requests. The generator's own cycle collector is off during a
round (collected between rounds): its full scans over 5,000 streams stopped it for up to 1 s,
and every system's figures read late by as much. Afterwards each worker's log is searched for tracebacks
and for channels-redis running out of connections (MaxConnectionsError).

Writes bench/results/<name>.json and <name>.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from bench import failures
from bench.report import RESULTS, table, write
from bench.servers import Setup, embedded, environment, raise_open_files_limit, team
from testing.live import ROOT, free_port

HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
CREATE_TOKENS = """
from tokens.models import AgentToken
for n in range({count}):
    print(AgentToken.issue(f"load-{{n:02d}}")[1])
"""
PROBE_SECONDS = 12
PROBE_TAIL_SECONDS = 1.0
# Issue 27's: headers within 1 s, an unrelated answer within 250 ms and the API's p99 under 250 ms
# while held, every request answered within 3 s of a mass hang-up, 1,000 at once within 15 s.
TARGETS = {"headers_max_s": 1.0, "answer_max_ms": 250, "api_p99_ms": 250, "probe_max_ms": 3000,
           "burst_headers_max_s": 15.0}  # fmt: skip


@dataclass
class Target:
    """One system under load: where agents call, where the person answers, and what it holds."""

    name: str
    url: str  # the worker the agents call
    answer_url: str
    tokens: list[str]  # one per agent; [""] * n for the floor (no authentication)
    answerer: dict[str, str]  # the person's (or bot's) headers
    asker: dict[str, str]  # the unrelated agent's headers
    pending: Callable[[], Awaitable[int]]
    logs: Callable[[], list[str]]
    forget: Callable[[str], Awaitable[None]] | None = None
    worker_pid: int | None = None  # the process the agents call, pinned to a core of its own with --pin
    rounds: list[dict[str, Any]] = field(default_factory=list)


def tool_call(text: str, n: int) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": "ask_question", "arguments": {"question": text}, "_meta": {"progressToken": n}},
        }
    ).encode()


class HeldCall:
    """One waiting call: its stream stays open, read to the end, until it is cancelled."""

    def __init__(self, http: httpx2.AsyncClient, url: str, text: str, n: int) -> None:
        self.headers_after: float | None = None
        self.status: int | None = None
        self.failure: str | None = None  # what went wrong before the response headers
        self.refusal = ""  # a refused call's whole body (up to 2,000 characters)
        self.retry_after: str | None = None
        self.streamed = ""  # a served call's stream so far (up to 4,000 characters): progress, then its result
        self.headers_seen = asyncio.Event()
        self.task = asyncio.create_task(self._run(http, url, text, n))

    async def _run(self, http: httpx2.AsyncClient, url: str, text: str, n: int) -> None:
        sent = time.perf_counter()
        try:
            async with http.stream("POST", f"{url}/mcp", content=tool_call(text, n)) as response:
                self.headers_after = time.perf_counter() - sent
                self.status = response.status_code
                self.headers_seen.set()
                if response.status_code != 200:
                    body = await response.aread()
                    self.failure = f"{response.status_code} {body[:160]!r}"
                    self.refusal = body[:2000].decode(errors="replace")
                    self.retry_after = response.headers.get("retry-after")
                async for chunk in response.aiter_bytes():
                    # progress, then the result: the call ends with its stream
                    if len(self.streamed) < 4000:
                        self.streamed += chunk[: 4000 - len(self.streamed)].decode(errors="replace")
        except httpx2.HTTPError as exc:
            if self.status is None:
                self.failure = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            self.headers_seen.set()


def quantile(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def open_calls(
    clients: list[httpx2.AsyncClient], url: str, count: int, rate: float | None, tag: str
) -> list[HeldCall]:
    """`count` calls spread over the clients, `rate` per second (None: all at once)."""
    calls: list[HeldCall] = []
    started = time.perf_counter()
    for n in range(count):
        if rate:
            delay = started + n / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
        calls.append(HeldCall(clients[n % len(clients)], url, f"{tag} {n}: which way?", n))
    return calls


async def unrelated_answer(
    target: Target,
    http: httpx2.AsyncClient,
    samples: int,
    tag: str,
    *,
    find_as_asker: bool = False,
    poll: float = 0.005,
) -> list[float]:
    """An agent outside the load asks; the answer POST is timed until its call returns.

    `find_as_asker`: the question is looked for with the asker's own token (`http`'s), which lists only its
    own questions, so other pending questions (a flood's) cannot hide it; the person answers it with theirs.
    `poll`: seconds between looks for the question (before the timing starts; a token's looks count towards
    its HOOKBRIDGE_REQUESTS_PER_MINUTE where that is on).
    """
    took = []
    for n in range(samples):
        text = f"{tag} unrelated {n}: which way?"
        call = HeldCall(http, target.url, text, 10**6 + n)
        try:
            question_id = None
            while question_id is None:
                if call.task.done():
                    raise RuntimeError(f"the call ended before it was answered: {call.failure or call.status}")
                listed = await http.get(
                    f"{target.answer_url}/api/questions",
                    params={"status": "pending", "limit": 50 if find_as_asker else 5},
                    headers=None if find_as_asker else target.answerer,
                )
                found = listed.json().get("questions", []) if listed.status_code == 200 else []
                question_id = next((q["id"] for q in found if q["question"] == text), None)
                if question_id is None:
                    await asyncio.sleep(poll)
            sent = time.perf_counter()
            answered = await http.post(
                f"{target.answer_url}/api/mcp-answer",
                json={"questionId": question_id, "answer": "this way"},
                headers=target.answerer,
            )
            assert answered.status_code == 200, answered.text
            await asyncio.wait_for(call.task, 30)
            took.append(time.perf_counter() - sent)
        finally:
            call.task.cancel()
    return took


async def api_reads(target: Target, http: httpx2.AsyncClient, count: int) -> list[float]:
    took = []
    for _ in range(count):
        sent = time.perf_counter()
        response = await http.get(
            f"{target.url}/api/questions", params={"status": "pending", "limit": 50}, headers=target.answerer
        )
        assert response.status_code == 200, response.text[:200]
        took.append(time.perf_counter() - sent)
    return took


async def hang_up(calls: list[HeldCall], target: Target) -> dict[str, float]:
    """Every call cancelled at once, while a process of its own probes the worker every 50 ms.

    Answering again: from the hang-up until the first probe sent after it that the worker
    answered within 250 ms. The probe runs until the worker let every call go and answers so again,
    and PROBE_TAIL_SECONDS more (a spike after that would be seen there), PROBE_SECONDS at most.
    """
    probe = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.probe", f"{target.url}/api/questions?limit=1", str(PROBE_SECONDS),
        json.dumps(target.answerer), cwd=ROOT, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert probe.stdout is not None
    await probe.stdout.readline()  # probing: the worker is answering before the hang-up
    probes: list[dict[str, Any]] = []
    answering_again = asyncio.Event()
    hung_up = time.perf_counter()

    def answering() -> dict[str, Any] | None:
        return next((p for p in probes if p["sent"] >= hung_up and p["status"] == 200 and p["took"] < 0.25), None)

    async def read(stdout: asyncio.StreamReader) -> None:
        while line := await stdout.readline():
            probes.append(json.loads(line))
            if answering() is not None:
                answering_again.set()
        answering_again.set()  # the probe's PROBE_SECONDS are over

    reading = asyncio.create_task(read(probe.stdout))
    for call in calls:
        call.task.cancel()
    await asyncio.gather(*(call.task for call in calls), return_exceptions=True)
    let_go = float("nan")
    while time.perf_counter() - hung_up < 300:
        if await target.pending() <= 0:
            let_go = time.perf_counter() - hung_up
            break
        await asyncio.sleep(0.1)
    await answering_again.wait()
    await asyncio.sleep(PROBE_TAIL_SECONDS)
    with contextlib.suppress(ProcessLookupError):  # its PROBE_SECONDS may be over
        probe.terminate()
    await probe.wait()
    await reading
    after = [p for p in probes if p["sent"] >= hung_up]
    first = answering()
    return {
        "answering_after_hang_up_s": first["sent"] + first["took"] - hung_up if first else float("nan"),
        "probe_max_ms": max((p["took"] for p in after), default=float("nan")) * 1000,
        "probes_failed": sum(1 for p in after if p["status"] != 200),
        "all_let_go_s": let_go,
    }


async def one_round(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    gc.disable()
    try:
        return await _one_round(target, args)
    finally:
        gc.enable()
        gc.collect()


async def token_clients(
    stack: AsyncExitStack, target: Target, limits: httpx2.Limits, timeout: httpx2.Timeout
) -> list[httpx2.AsyncClient]:
    """One HTTP client per agent token of `target`, closed with `stack`."""
    return [
        await stack.enter_async_context(
            httpx2.AsyncClient(
                headers={**HEADERS, **({"Authorization": f"Bearer {token}"} if token else {})},
                limits=limits,
                timeout=timeout,
            )
        )
        for token in target.tokens
    ]


async def _one_round(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    tag = f"load {uuid.uuid4().hex[:6]}"
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=None)
    timeout = httpx2.Timeout(60, read=None)
    async with AsyncExitStack() as stack:
        clients = await token_clients(stack, target, limits, timeout)
        person = await stack.enter_async_context(httpx2.AsyncClient(headers=HEADERS, timeout=timeout, limits=limits))
        asker = await stack.enter_async_context(
            httpx2.AsyncClient(headers={**HEADERS, **target.asker}, timeout=timeout, limits=limits)
        )
        await unrelated_answer(target, asker, 2, tag + " warm")
        alone = await unrelated_answer(target, asker, args.sample, tag + " alone")

        opening = time.perf_counter()
        calls = await open_calls(clients, target.url, args.calls, args.rate, tag)
        await asyncio.wait_for(asyncio.gather(*(c.headers_seen.wait() for c in calls)), 120)
        opened_s = time.perf_counter() - opening
        refused = [c.status for c in calls if c.status != 200]
        failures = Counter(c.failure for c in calls if c.failure)
        held_headers = [c.headers_after for c in calls if c.headers_after is not None]
        await asyncio.sleep(1)
        while_held = await unrelated_answer(target, asker, args.sample, tag + " held")
        api = await api_reads(target, person, args.api_reads)
        after = await hang_up(calls, target)
        if target.forget is not None:
            await target.forget(tag)

        burst = await open_calls(clients, target.url, args.burst, None, tag + " burst")
        await asyncio.wait_for(asyncio.gather(*(c.headers_seen.wait() for c in burst)), 120)
        burst_headers = [c.headers_after for c in burst if c.headers_after is not None]
        burst_refused = [c.status for c in burst if c.status != 200]
        failures.update(c.failure for c in burst if c.failure)
        burst_after = await hang_up(burst, target)
        if target.forget is not None:
            await target.forget(tag)
    return {
        "calls": args.calls,
        "opened_s": opened_s,
        "refused": len(refused),
        "headers_p50_ms": quantile(held_headers, 0.5) * 1000,
        "headers_p99_ms": quantile(held_headers, 0.99) * 1000,
        "headers_max_s": max(held_headers, default=float("nan")),
        "answer_alone_p50_ms": statistics.median(alone) * 1000,
        "answer_p50_ms": statistics.median(while_held) * 1000,
        "answer_max_ms": max(while_held) * 1000,
        "api_p50_ms": quantile(api, 0.5) * 1000,
        "api_p99_ms": quantile(api, 0.99) * 1000,
        **after,
        "burst": args.burst,
        "burst_refused": len(burst_refused),
        "burst_headers_p50_s": quantile(burst_headers, 0.5),
        "burst_headers_max_s": max(burst_headers, default=float("nan")),
        "burst_all_let_go_s": burst_after["all_let_go_s"],
        "failures": dict(failures.most_common(5)),
    }


def pin(target: Target) -> None:
    """The worker under test on the first core, this load generator (and its probe) on the others.

    On a machine of two cores the generator's own work (5,000 streams) otherwise delays the
    worker it measures; every system gets the same arrangement in turn.
    """
    cores = sorted(os.sched_getaffinity(0) | os.sched_getaffinity(target.worker_pid or 0))
    if len(cores) < 2 or target.worker_pid is None:
        return

    def every_thread(pid: int, on: set[int]) -> None:
        # Affinity is a thread's: the worker's database threads must go with its event loop.
        for thread in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(ProcessLookupError):
                os.sched_setaffinity(int(thread), on)

    every_thread(target.worker_pid, {cores[0]})
    every_thread(os.getpid(), set(cores[1:]))


def count_in_logs(target: Target, needle: str) -> int:
    return sum(log.count(needle) for log in target.logs())


def tracebacks_by_error(target: Target) -> dict[str, int]:
    """Each traceback's last line (the error), counted: what to fix first."""
    errors: Counter[str] = Counter()
    for log in target.logs():
        lines = log.splitlines()
        for n, line in enumerate(lines):
            if line.startswith("Traceback"):
                tail = next((later for later in lines[n + 1 :] if later and not later.startswith((" ", "\t"))), "")
                errors[tail[:160]] += 1
    return dict(errors.most_common(5))


@asynccontextmanager
async def floor_target(tokens: int) -> AsyncIterator[Target]:
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        log = open(f"{folder}/floor.log", "w+")  # noqa: SIM115, ASYNC230  (closed below)
        process = subprocess.Popen(  # noqa: ASYNC220  (started once, before anything is measured)
            [sys.executable, "-m", "bench.floor", "--port", str(port), "--database", f"{folder}/floor.sqlite3"],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            async with httpx2.AsyncClient() as http:
                for _ in range(100):
                    with contextlib.suppress(httpx2.HTTPError):
                        await http.get(f"{url}/api/questions")
                        break
                    await asyncio.sleep(0.1)

                async def pending() -> int:
                    return len((await http.get(f"{url}/api/questions")).json()["questions"])

                def logs() -> list[str]:
                    log.seek(0)
                    return [log.read()]

                yield Target("floor", url, url, [""] * tokens, {}, {}, pending, logs, worker_pid=process.pid)
        finally:
            process.terminate()
            process.wait(10)
            log.close()


def _hookbridge_target(setup: Setup, name: str, tokens: int) -> Target:
    server = setup.agent_side
    created = server.manage("shell", "-c", CREATE_TOKENS.format(count=tokens)).split()

    async def pending() -> int:
        return await asyncio.to_thread(setup.count_pending)

    async def forget(prefix: str) -> None:
        await asyncio.to_thread(setup.forget_pending, prefix)

    return Target(
        name,
        server.url,
        setup.answer_side.url,
        created[-tokens:],
        setup.answer_side.auth("answer-bot"),
        server.auth("agent-b"),
        pending,
        lambda: [worker.log() for worker in setup.workers],
        forget,
        worker_pid=server.process.pid if server.process else None,
    )


@asynccontextmanager
async def hookbridge_target(mode: str, tokens: int, **env: str) -> AsyncIterator[Target | None]:
    if mode == "team":
        from testing.team import POSTGRES_URL, REDIS_URL, reachable

        if not (reachable(POSTGRES_URL, 5432) and reachable(REDIS_URL, 6379)):
            print("team: skipped, PostgreSQL or Redis is unreachable", flush=True)
            yield None
            return
    with team(**env) if mode == "team" else embedded(ROOT, **env) as setup:
        yield _hookbridge_target(setup, mode, tokens)


def ratio(value: float, floor: float) -> float | None:
    return round(value / floor, 2) if floor and floor == floor and value == value else None


def summarise(targets: list[Target]) -> list[dict[str, Any]]:
    rows = []
    floor = next((t for t in targets if t.name == "floor"), None)
    for target in targets:
        keys = [k for k, v in target.rounds[0].items() if isinstance(v, float | int)]
        row: dict[str, Any] = {"system": target.name, "rounds": len(target.rounds)}
        for key in keys:
            row[key] = round(statistics.median(r[key] for r in target.rounds), 3)
        if floor is not None and target is not floor:
            for key in ("headers_p99_ms", "answer_p50_ms", "api_p99_ms", "burst_headers_max_s"):
                row[f"{key}_x_floor"] = ratio(row[key], statistics.median(r[key] for r in floor.rounds))
        row["tracebacks"] = count_in_logs(target, "Traceback")
        row["traceback_errors"] = tracebacks_by_error(target)
        row["max_connections_errors"] = count_in_logs(target, "MaxConnectionsError")
        rows.append(row)
    return rows


def verdicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    checks = []
    for row in rows:
        if row["system"] == "floor":
            continue
        for key, limit in TARGETS.items():
            value = row.get(key)
            checks.append(
                {
                    "system": row["system"],
                    "target": f"{key} ≤ {limit}",
                    "value": value,
                    "met": value is not None and value == value and value <= limit,
                }
            )
        for key in ("refused", "burst_refused", "probes_failed", "tracebacks", "max_connections_errors"):
            checks.append({"system": row["system"], "target": f"{key} = 0", "value": row[key], "met": row[key] == 0})
    return checks


def markdown(result: dict[str, Any]) -> str:
    rows = result["systems"]
    m = result["machine"]
    machine = f"{m['cpus']} cores, {m['memory_gib']} GiB, {m['machine']}, Python {m['python']}"
    shown = [
        {
            "system": r["system"],
            "calls held": r["calls"],
            "refused": r["refused"],
            "opened in s": r["opened_s"],
            "headers p50 / p99 ms": f"{r['headers_p50_ms']:.1f} / {r['headers_p99_ms']:.1f}",
            "headers max s": r["headers_max_s"],
            "answer alone → held p50 ms": f"{r['answer_alone_p50_ms']:.1f} → {r['answer_p50_ms']:.1f}",
            "API p50 / p99 ms": f"{r['api_p50_ms']:.1f} / {r['api_p99_ms']:.1f}",
            "answering after hang-up s": r["answering_after_hang_up_s"],
            "slowest probe ms": r["probe_max_ms"],
            "all let go s": r["all_let_go_s"],
            f"{r['burst']:,} at once: headers max s": r["burst_headers_max_s"],
            "tracebacks": r["tracebacks"],
            "MaxConnectionsError": r["max_connections_errors"],
        }
        for r in rows
    ]
    ratios = [
        {"system": r["system"], **{k.removesuffix("_x_floor"): v for k, v in r.items() if k.endswith("_x_floor")}}
        for r in rows
        if r["system"] != "floor"
    ]
    return "\n".join(
        [
            f"# Fifty busy agents: {result['name']}\n",
            f"Taken {result['taken_at']} on {machine}; {result['plan']}.\n",
            table(shown),
            "\n## Against the floor (times the floor's figure)\n",
            table(ratios),
            "\n## Against the targets (issue 27)\n",
            table(result["targets"]),
            "\n## Tracebacks in the workers' logs, by error\n",
            *(
                f"- {r['system']}: {error} ({count} times)"
                for r in rows
                for error, count in r.get("traceback_errors", {}).items()
            ),
            "",
        ]
    )


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    raise_open_files_limit()
    systems = ["floor", "embedded", "team"] if args.systems == "all" else args.systems.split(",")
    async with AsyncExitStack() as stack:
        targets: list[Target] = []
        for name in systems:
            if name == "floor":
                targets.append(await stack.enter_async_context(floor_target(args.tokens)))
            else:
                found = await stack.enter_async_context(hookbridge_target(name, args.tokens))
                if found is not None:
                    targets.append(found)
        for round_number in range(args.rounds):
            for target in targets:  # interleaved: each round runs every system once, in turn
                if args.pin:
                    pin(target)
                row = await one_round(target, args)
                target.rounds.append(row)
                print(f"round {round_number + 1}, {target.name}: {json.dumps(row, default=str)}", flush=True)
        rows = summarise(targets)
    plan = (
        f"{args.calls:,} calls from {args.tokens} tokens at {args.rate:g}/s, then {args.burst:,} at once; "
        f"{args.rounds} round(s), systems interleaved"
        + ("; the worker under test on a core of its own, the load generator on the other" if args.pin else "")
    )
    return {
        "name": args.name,
        "taken_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": environment(),
        "plan": plan,
        "systems": rows,
        "targets": verdicts(rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", default="agents")
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--tokens", type=int, default=50)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=20, help="unrelated answers timed, alone and while held")
    parser.add_argument("--api-reads", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--systems", default="all", help="all, or a comma-separated list of floor, embedded, team")
    parser.add_argument("--quick", action="store_true", help="a few of everything: the harness still works")
    parser.add_argument(
        "--pin",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the worker under test on a core of its own, the load generator on the rest (default: on)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the results go (bench/results)")
    args = parser.parse_args()
    if args.quick:
        args.calls, args.tokens, args.rate, args.burst, args.sample, args.api_reads = 60, 3, 60, 30, 3, 20
    result = asyncio.run(main_async(args))
    for path in write(args.name, result, markdown(result), out=args.out):
        print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    failures.reporting("bench.agents", main)
