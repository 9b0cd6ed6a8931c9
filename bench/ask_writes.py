"""How many new asks one worker writes a second, and what its bound says past that (issue 54, point 4):

    python -m bench.ask_writes                      # 3 interleaved rounds, 1,000 asks from 50 tokens at once
    python -m bench.ask_writes --quick --name ask-writes-smoke

For each system (the floor: the same SDK's least server; Hook Bridge embedded, on SQLite; Hook Bridge in team
mode, on PostgreSQL and Redis, its agents on one of two workers), one after the other in each round: `asks`
ask_question calls from `tokens` tokens, every one a new question, opened all at once and held. Hook Bridge runs
with its worker-wide bound as it ships (HOOKBRIDGE_QUEUED_ASKS) and the per-token limits off, so only the bound
stands between the flood and the database. Counted per round:

- how many calls got their response headers with 200, and how many were refused with 503 and a Retry-After
  naming HOOKBRIDGE_QUEUED_ASKS (never a silent wait), or, let in together before any took its place in the
  queue, by the tool's own result naming it;
- how many questions were written (pending in the database, read every 0.1 s), and the rate: those questions
  over the seconds from the first request until the last of them was written;
- the slowest response headers (a refusal is said at once).

Writes bench/results/<name>.json and <name>.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import statistics
import time
import uuid
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx2

from bench import failures
from bench.agents import HeldCall, Target, floor_target, hookbridge_target, quantile, ratio, token_clients
from bench.report import RESULTS, table, write
from bench.servers import environment, raise_open_files_limit

# Past this long with no new question written, a round's writing is over (--quiet; --quick waits longer, so a
# smoke run on a loaded machine counts writes that straggle).
QUIET_SECONDS = 2.0


async def one_round(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    tag = f"writes {uuid.uuid4().hex[:6]}"
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=None)
    timeout = httpx2.Timeout(60, read=None)
    async with AsyncExitStack() as stack:
        clients = await token_clients(stack, target, limits, timeout)
        before = await target.pending()
        started = time.perf_counter()
        calls = [HeldCall(clients[n % len(clients)], target.url, f"{tag} {n}: which way?", n) for n in range(args.asks)]
        written, last_written_at, changed_at = before, started, started
        while time.perf_counter() - changed_at < args.quiet or not all(c.headers_seen.is_set() for c in calls):
            await asyncio.sleep(0.1)
            now = await target.pending()
            if now != written:
                written, last_written_at = now, time.perf_counter()
                changed_at = last_written_at
            if time.perf_counter() - started > args.limit:
                break
        refused = [c for c in calls if c.status == 503]
        said = sum(1 for c in refused if c.retry_after and "HOOKBRIDGE_QUEUED_ASKS=" in c.refusal)
        # Asks let past the edge together, before any took its place in the queue, are refused by the tool
        # itself: a result at once, naming the setting, in a 200's stream.
        refused_in_result = [c for c in calls if c.status == 200 and "HOOKBRIDGE_QUEUED_ASKS=" in c.streamed]
        headers = [c.headers_after for c in calls if c.headers_after is not None]
        for call in calls:
            call.task.cancel()
        await asyncio.gather(*(c.task for c in calls), return_exceptions=True)
    if target.forget is not None:
        await target.forget(tag)
    count = written - before
    seconds = last_written_at - started
    return {
        "asks": args.asks,
        "served": sum(1 for c in calls if c.status == 200) - len(refused_in_result),
        "refused_503": len(refused),
        "refusals_naming_the_setting_with_retry_after": said,
        "refused_in_the_result": len(refused_in_result),
        "other": sum(1 for c in calls if c.status not in (200, 503)),
        "written": count,
        "written_per_s": round(count / seconds, 1) if seconds > 0 else 0.0,
        "last_written_s": round(seconds, 2),
        "headers_p50_ms": round(quantile(headers, 0.5) * 1000, 1),
        "headers_max_s": round(max(headers, default=float("nan")), 2),
    }


def summarise(targets: list[Target]) -> list[dict[str, Any]]:
    floor = next((t for t in targets if t.name == "floor"), None)
    rows = []
    for target in targets:
        row: dict[str, Any] = {"system": target.name, "rounds": len(target.rounds)}
        for key in target.rounds[0]:
            row[key] = round(statistics.median(r[key] for r in target.rounds), 2)
        row["written_per_s_each_round"] = [r["written_per_s"] for r in target.rounds]
        if floor is not None and target is not floor:
            row["written_per_s_vs_floor"] = ratio(
                row["written_per_s"], statistics.median(r["written_per_s"] for r in floor.rounds)
            )
        rows.append(row)
    return rows


def markdown(result: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"# {result['name']}: new asks one worker writes a second, and its bound past that",
            "",
            f"Taken {result['taken_at']} on {result['machine']['cpus']} cores ({result['machine']['python']}).",
            f"Plan: {result['plan']}.",
            "",
            table(result["systems"]),
            "",
        ]
    )


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    raise_open_files_limit()
    # The bound as it ships unless told; the per-token limits off (bench.servers), so only the bound holds the
    # flood back.
    env = {} if args.bound is None else {"HOOKBRIDGE_QUEUED_ASKS": str(args.bound)}
    async with AsyncExitStack() as stack:
        targets: list[Target] = []
        for name in args.systems.split(","):
            if name == "floor":
                targets.append(await stack.enter_async_context(floor_target(args.tokens)))
            else:
                found = await stack.enter_async_context(hookbridge_target(name, args.tokens, **env))
                if found is not None:
                    targets.append(found)
        for number in range(args.rounds):
            for target in targets:  # interleaved: every system once a round, in turn
                row = await one_round(target, args)
                target.rounds.append(row)
                print(f"round {number + 1}, {target.name}: {json.dumps(row)}", flush=True)
        rows = summarise(targets)
    return {
        "name": args.name,
        "taken_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": environment(),
        "plan": (
            f"{args.rounds} round(s), systems interleaved; {args.asks} new asks from {args.tokens} tokens opened "
            "at once and held, each round; "
            + ("HOOKBRIDGE_QUEUED_ASKS as it ships" if args.bound is None else f"HOOKBRIDGE_QUEUED_ASKS={args.bound}")
            + ", the per-token limits off"
        ),
        "systems": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", default="ask-writes")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--asks", type=int, default=1000)
    parser.add_argument("--tokens", type=int, default=50)
    parser.add_argument("--systems", default="floor,embedded,team")
    parser.add_argument("--limit", type=float, default=120.0, help="seconds a round may take at most")
    parser.add_argument("--bound", type=int, default=None, help="HOOKBRIDGE_QUEUED_ASKS (default: as it ships)")
    parser.add_argument("--quiet", type=float, default=QUIET_SECONDS, help="seconds with no new write that end a round")
    parser.add_argument("--quick", action="store_true", help="a few of everything: the harness still works")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.quick:
        # A bound far below the flood, so the refusals are seen on a machine of any speed.
        args.rounds, args.asks, args.tokens = 1, 300, 5
        args.bound = 10 if args.bound is None else args.bound
        args.quiet = max(args.quiet, 15.0)
    with contextlib.suppress(KeyboardInterrupt):
        result = asyncio.run(main_async(args))
        for path in write(args.name, result, markdown(result), out=args.out):
            print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    failures.reporting("bench.ask_writes", main)
