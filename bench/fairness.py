"""One token's flood against another token's answers (issues 37 and 54), every request kind, beside the floor:

    python -m bench.fairness                      # 3 interleaved rounds, 40 answers timed per phase
    python -m bench.fairness --kinds asks,events  # some of the request kinds
    python -m bench.fairness --quick --name fairness-smoke

For each system (the floor: the same SDK's least server; Hook Bridge embedded with every per-token limit
off ("unlimited"); Hook Bridge embedded with its per-token limits on, as they ship but for 600 asks a minute,
so that the timed agent's own asks fit), one after the other in each round:

1. Quiet: agent B asks, the person answers through the JSON API, and the time from the answer's POST
   until B's call returns is taken, `--sample` times.
2. For each request kind, a flood: agent A (another token) runs `--flooders` loops of that kind as fast as
   the server lets it, never waiting as a 429's Retry-After says; meanwhile B's answers are timed again,
   `--sample` times. The kinds (`--kinds`):
   - asks: half the loops re-ask one question and hang up at its response headers (a host that times out
     and asks again), half ask a new question each time;
   - events: `submit_lifecycle_event` (a lifecycle event, one write and the dashboards told);
   - status: `get_phase_status` (a status read: the token's pending questions and last event);
   - hooks: `POST /hooks/claude` with a PostToolUse body (a host's hook event, recorded in its session);
   - api: `GET /api/questions?status=pending` (the JSON API's read of the token's questions).

Reported per system and kind: B's answer -> agent p50 and p99, quiet and under the flood, and how many of
A's requests were served and refused (429 or an error naming a limit). The target: B's p99 under every
flood stays under 100 ms on this machine. Writes bench/results/<name>.json and <name>.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import multiprocessing
import queue
import statistics
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2

from bench import failures
from bench.agents import HEADERS, Target, _hookbridge_target, floor_target, pin, quantile, ratio, unrelated_answer
from bench.report import RESULTS, table, write
from bench.servers import embedded, environment, raise_open_files_limit
from testing.live import ROOT

TARGET_P99_MS = 100.0
# Every per-token limit off: what one token can do to another without them (re-asks were never limited before
# issue 37; new questions were, by HOOKBRIDGE_QUESTIONS_PER_MINUTE, which the benchmarks' servers turn off).
UNLIMITED = {
    "HOOKBRIDGE_REQUESTS_PER_MINUTE": "0", "HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN": "100000",
    "HOOKBRIDGE_QUESTIONS_PER_MINUTE": "0",
}  # fmt: skip
# The limits as they ship (hookbridge_site/settings.py), but for asks a minute: the timed agent itself asks
# about four questions a second here, far past the 60 a person's agent is allowed; 600 keeps its asks within
# it, and the flood's asks are held to the same.
LIMITED = {
    "HOOKBRIDGE_REQUESTS_PER_MINUTE": "1200", "HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN": "20",
    "HOOKBRIDGE_QUESTIONS_PER_MINUTE": "600",
}  # fmt: skip


KINDS = ("asks", "events", "status", "hooks", "api")


def tool_body(name: str, arguments: dict[str, Any], n: int) -> bytes:
    call = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return json.dumps(call).encode()


def flood_request(kind: str, index: int, n: int) -> tuple[str, str, dict[str, str], bytes | None]:
    """Agent A's `n`th request of loop `index` of `kind`: method, path, its extra query, its body."""
    if kind == "asks":
        text = f"flood re-ask {index}: again?" if index % 2 else f"flood new {index}-{n}: which?"
        return "POST", "/mcp", {}, tool_body("ask_question", {"question": text}, n)
    if kind == "events":
        event = {"event_type": "task-started", "phase_name": f"flood {index}"}
        return "POST", "/mcp", {}, tool_body("submit_lifecycle_event", event, n)
    if kind == "status":
        return "POST", "/mcp", {}, tool_body("get_phase_status", {}, n)
    if kind == "hooks":
        said = {
            "hook_event_name": "PostToolUse", "session_id": f"flood-{index}", "cwd": "/tmp/flood",
            "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a\nb"},
        }  # fmt: skip
        return "POST", "/hooks/claude", {}, json.dumps(said).encode()
    if kind == "api":
        return "GET", "/api/questions", {"status": "pending", "limit": "50"}, None
    raise ValueError(f"--kinds: no request kind {kind!r} (the kinds: {', '.join(KINDS)})")


async def flood(url: str, token: str, kind: str, loops: int, stop: asyncio.Event, tally: Counter[str]) -> None:
    """`loops` loops of agent A's requests of `kind` until `stop`."""
    headers = {**HEADERS, **({"Authorization": f"Bearer {token}"} if token else {})}
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30), limits=limits) as http:

        async def loop(index: int) -> None:
            n = 0
            while not stop.is_set():
                n += 1
                method, path, params, body = flood_request(kind, index, n)
                try:
                    sent = http.stream(method, f"{url}{path}", params=params, content=body)
                    async with sent as response:
                        if response.status_code == 200:
                            tally["served"] += 1
                            if kind != "asks":  # an ask is left at its headers; the rest are read whole
                                await response.aread()
                        else:
                            tally[f"refused {response.status_code}"] += 1
                            await response.aread()
                            await asyncio.sleep(0.01)  # a client that does not wait as told still backs off a hair
                except httpx2.HTTPError:
                    tally["failed"] += 1

        await asyncio.gather(*(loop(index) for index in range(loops)))


def flood_server(commands: Any, said: Any) -> None:
    """Agent A's floods, in a process of its own, one at a time as told: ("start", url, token, kind, loops) starts
    one and says "ready" once its loops run; ("stop",) ends it and says its tally; None ends the process.

    In the timing process A's loops' callbacks queued ahead of B's own, and B's answers measured the load
    generator: the floor itself then missed the target (issue 54, point 7). One process serves the whole run:
    starting one per flood (a Python with Django to import) cost seconds each.
    """

    async def serve() -> None:
        while (command := await asyncio.to_thread(commands.get)) is not None:
            _, url, token, kind, loops = command
            tally, done = Counter[str](), asyncio.Event()
            running = asyncio.create_task(flood(url, token, kind, loops, done, tally))
            said.put("ready")
            await asyncio.to_thread(commands.get)  # ("stop",)
            done.set()
            await asyncio.wait_for(running, 60)
            said.put(dict(tally))

    asyncio.run(serve())


class Flooder:
    """The flood process, started at the first flood (so that it runs where the pinned load generator runs)."""

    def __init__(self) -> None:
        self.process: Any = None
        self.commands: Any = None
        self.said: Any = None

    def _ensure(self) -> None:
        if self.process is not None and self.process.is_alive():
            return
        context = multiprocessing.get_context("spawn")
        self.commands, self.said = context.Queue(), context.Queue()
        self.process = context.Process(target=flood_server, args=(self.commands, self.said), daemon=True)
        self.process.start()

    @asynccontextmanager
    async def flooding(self, url: str, token: str, kind: str, loops: int) -> AsyncIterator[Counter[str]]:
        """Agent A's flood of `kind` while the block runs; the Counter it yields holds A's tally after it."""
        self._ensure()
        self.commands.put(("start", url, token, kind, loops))
        ready = await asyncio.to_thread(self.said.get, True, 120)
        assert ready == "ready", ready
        tally = Counter[str]()
        try:
            yield tally
        finally:
            self.commands.put(("stop",))
            with contextlib.suppress(queue.Empty):
                tally.update(await asyncio.to_thread(self.said.get, True, 90))

    def close(self) -> None:
        if self.process is None:
            return
        self.commands.put(None)
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()


def _ms(samples: list[float], q: float) -> float:
    return round(quantile(samples, q) * 1000, 2)


async def one_round(target: Target, args: argparse.Namespace, number: int) -> dict[str, Any]:
    """One round on `target`: B's answers quiet, then under each kind's flood. {kind or "quiet": figures}."""
    tag = f"r{number}-{target.name}"
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=None)
    headers = {**HEADERS, **target.asker}
    row: dict[str, Any] = {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=None), limits=limits) as http:
        # B looks for its question ten times a second, as a host polls: its own requests stay within its allowance.
        await unrelated_answer(target, http, 2, f"{tag} warm", find_as_asker=True, poll=args.poll)
        quiet = await unrelated_answer(target, http, args.sample, f"{tag} quiet", find_as_asker=True, poll=args.poll)
        row["quiet"] = {"p50_ms": _ms(quiet, 0.5), "p99_ms": _ms(quiet, 0.99)}
        for kind in args.kinds:
            async with args.flooder.flooding(target.url, target.tokens[0], kind, args.flooders) as tally:
                started = time.perf_counter()
                await asyncio.sleep(args.warmup)
                loud = await unrelated_answer(
                    target, http, args.sample, f"{tag} {kind} flood", find_as_asker=True, poll=args.poll
                )
            seconds = time.perf_counter() - started
            row[kind] = {
                "p50_ms": _ms(loud, 0.5),
                "p99_ms": _ms(loud, 0.99),
                "served_per_s": round(tally["served"] / seconds, 1),
                "refused_per_s": round(sum(v for k, v in tally.items() if k.startswith("refused")) / seconds, 1),
                "failed": tally["failed"],
            }
            if target.forget is not None:
                await target.forget("flood ")
            # What one kind's flood left queued on the worker is not the next kind's to pay for.
            await asyncio.sleep(args.settle)
    return row


@asynccontextmanager
async def hookbridge(name: str, env: dict[str, str]) -> AsyncIterator[Target]:
    with embedded(ROOT, **env) as setup:
        yield _hookbridge_target(setup, name, 1)


def summarise(targets: list[Target], kinds: list[str]) -> list[dict[str, Any]]:
    """One row per system and phase (quiet, then each kind's flood): medians over the rounds, each round's p99."""
    floor = next((t for t in targets if t.name == "floor"), None)
    rows = []
    for target in targets:
        for phase in ["quiet", *kinds]:
            figures = [r[phase] for r in target.rounds]
            row: dict[str, Any] = {"system": target.name, "flood": "none" if phase == "quiet" else phase}
            for key in figures[0]:
                row[key] = round(statistics.median(f[key] for f in figures), 2)
            row["p99_each_round"] = [f["p99_ms"] for f in figures]
            if floor is not None and target is not floor:
                row["p99_vs_floor"] = ratio(row["p99_ms"], statistics.median(r[phase]["p99_ms"] for r in floor.rounds))
            row["meets_target"] = all(f["p99_ms"] < TARGET_P99_MS for f in figures)
            rows.append(row)
    return rows


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"# {result['name']}: one token's flood against another token's answers",
        "",
        f"Taken {result['taken_at']} on {result['machine']['cpus']} cores ({result['machine']['python']}).",
        f"Plan: {result['plan']}.",
        f"Target: agent B's answer -> agent p99 under agent A's flood below {TARGET_P99_MS:g} ms, every round.",
        "",
        table(result["systems"]),
        "",
    ]
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    raise_open_files_limit()
    args.flooder = Flooder()
    async with AsyncExitStack() as stack:
        stack.callback(args.flooder.close)
        targets: list[Target] = []
        for name in args.systems.split(","):
            if name == "floor":
                targets.append(await stack.enter_async_context(floor_target(1)))
            elif name == "unlimited":
                targets.append(await stack.enter_async_context(hookbridge("unlimited", UNLIMITED)))
            elif name == "embedded":
                targets.append(await stack.enter_async_context(hookbridge("embedded", args.limited)))
        for number in range(args.rounds):
            for target in targets:  # interleaved: every system once a round, in turn
                if args.pin:
                    pin(target)
                row = await one_round(target, args, number)
                target.rounds.append(row)
                print(f"round {number + 1}, {target.name}: {json.dumps(row)}", flush=True)
        rows = summarise(targets, args.kinds)
    plan = (
        f"{args.rounds} round(s), systems interleaved; {args.sample} answers timed quiet and {args.sample} under "
        f"each flood of {args.flooders} loops ({', '.join(args.kinds)}), after {args.warmup} s of it"
        + ("; the worker under test on a core of its own, the flood and the timing on the other" if args.pin else "")
    )
    return {
        "name": args.name,
        "taken_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": environment(),
        "plan": plan,
        "systems": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", default="fairness")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--flooders", type=int, default=40)
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of flood before B's answers are timed")
    parser.add_argument("--systems", default="floor,unlimited,embedded")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"the floods, in turn (of {', '.join(KINDS)})")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds between one kind's flood and the next")
    parser.add_argument("--quick", action="store_true", help="a few of everything: the harness still works")
    parser.add_argument(
        "--pin",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the worker under test on a core of its own, the flood and the timing on the rest (default: on)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    args.kinds = [kind.strip() for kind in args.kinds.split(",") if kind.strip()]
    if unknown := sorted(set(args.kinds) - set(KINDS)):
        parser.error(f"--kinds: no request kind {', '.join(unknown)} (the kinds: {', '.join(KINDS)})")
    args.limited, args.poll = LIMITED, 0.1
    if args.quick:
        args.rounds, args.sample, args.flooders, args.warmup, args.settle = 1, 3, 4, 0.5, 0.2
        # A smoke run's floods last about a second: an allowance of 300 a minute (bursts of 30) is spent within it
        # on a machine of any speed, so its refusals show; B looks for its question twice a second, within it too.
        args.limited, args.poll = {**LIMITED, "HOOKBRIDGE_REQUESTS_PER_MINUTE": "300"}, 0.5
    with contextlib.suppress(KeyboardInterrupt):
        result = asyncio.run(main_async(args))
        for path in write(args.name, result, markdown(result), out=args.out):
            print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    failures.reporting("bench.fairness", main)
