"""Measure Hook Bridge as its users feel it: `make bench` (or python -m bench.run).

    python -m bench.run                       # both modes, the full figures (several minutes)
    python -m bench.run --mode embedded       # one mode
    python -m bench.run --quick --name smoke  # a few of everything: the harness still works

Writes bench/results/<name>.json, <name>.md and <name>-latency.png (the latency CDFs).
Everything runs against real daphne processes over HTTP and WebSocket; the agents use
the mcp SDK's Client and the person is a separate process posting the dashboard's form.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import re
import time
from pathlib import Path
from typing import Any

from bench import failures, scenarios
from bench.report import RESULTS, plot_cdf, table, write
from bench.servers import SETUPS, Setup, environment, raise_open_files_limit

# latency: (waiting agents, questions, seconds between answers); throughput: (agents, questions), answered flat out.
FULL = {
    "latency": ([1, 10, 100], 1000, 0.05),
    "throughput": (100, 1000),
    "held": (2000, 100),
    "lifecycle": (10.0, 10),
    "fanout": (100, 20),
    "stdio": (200, 0.05),
}
QUICK = {
    "latency": ([1, 5], 20, 0.02),
    "throughput": (5, 20),
    "held": (50, 5),
    "lifecycle": (1.5, 2),
    "fanout": (5, 3),
    "stdio": (10, 0.02),
}

TARGETS = {
    "embedded": {"latency_p50_ms@100": 5, "latency_p99_ms@100": 20, "held_calls": 2000, "kib_per_held_call": 50},
    "team": {"latency_p99_ms": 30, "events_per_second": 500, "fanout_last_ms": 100},
}


SCENARIOS = ("latency", "throughput", "lifecycle", "fanout", "stdio", "held")


async def run_mode(
    mode: str, plan: dict[str, Any], only: tuple[str, ...] = SCENARIOS
) -> tuple[dict[str, Any], dict[str, list[float]]]:
    figures: dict[str, Any] = {
        "latency": [],
        "throughput": None,
        "held": None,
        "lifecycle": None,
        "fanout": None,
        "stdio": None,
    }
    curves: dict[str, list[float]] = {}
    with SETUPS[mode]() as setup:
        try:
            await _measure(setup, mode, plan, only, figures, curves)
        except BaseException:
            # The workers' logs go with their temporary folders: keep what explains the failure.
            for worker in setup.workers:
                print(f"--- {worker.url}, its log without the access lines:\n{_problems(worker.log())}", flush=True)
            raise
    return figures, curves


def _problems(log: str, lines: int = 80) -> str:
    access = re.compile(r'\] "(GET|POST|DELETE|HEAD|OPTIONS) |\bWS(CONNECTING|CONNECT|DISCONNECT)\b')
    return "\n".join([line for line in log.splitlines() if not access.search(line)][-lines:])


async def _measure(
    setup: Setup,
    mode: str,
    plan: dict[str, Any],
    only: tuple[str, ...],
    figures: dict[str, Any],
    curves: dict[str, list[float]],
) -> None:
    levels, questions, pace = plan["latency"]
    for agents in levels if "latency" in only else []:
        row, samples, pings = await scenarios.latency(setup, agents, questions, pace)
        figures["latency"].append(row)
        curves[f"{mode}: answer, {agents} waiting"] = samples
        if agents in (levels[0], levels[-1]):
            curves[f"{mode}: floor (tools/list), {agents} agents"] = pings
        print(f"  latency at {agents} agents: {row['latency']} floor {row['floor']}", flush=True)
    if "throughput" in only:
        agents, questions = plan["throughput"]
        figures["throughput"], _, _ = await scenarios.latency(setup, agents, questions)
        print(f"  flat out, {agents} agents: {figures['throughput']['questions_per_second']}/s", flush=True)
    if "lifecycle" in only:
        seconds, agents = plan["lifecycle"]
        figures["lifecycle"], _ = await scenarios.lifecycle(setup, seconds, agents)
        print(f"  lifecycle: {figures['lifecycle']}", flush=True)
    if "fanout" in only:
        dashboards, rounds = plan["fanout"]
        figures["fanout"], _ = await scenarios.fanout(setup, dashboards, rounds)
        print(f"  fan-out: {figures['fanout']}", flush=True)
    if "stdio" in only:
        questions, pace = plan["stdio"]
        figures["stdio"], samples, pings = await scenarios.stdio(setup, questions, pace)
        curves[f"{mode}: stdio agent, answered on the dashboard"] = samples
        print(f"  stdio: {figures['stdio']['latency']} floor {figures['stdio']['floor']}", flush=True)
    # Last: thousands of calls hung up at once keep the worker busy for a while.
    if "held" in only:
        count, sample = plan["held"]
        figures["held"], _, loaded = await scenarios.held_calls(setup, count, sample)
        curves[f"{mode}: answer while holding {count}"] = loaded
        print(f"  held: {figures['held']}", flush=True)


def markdown(result: dict[str, Any]) -> str:
    parts = [f"# Hook Bridge benchmark: {result['name']}\n", f"Taken {result['taken_at']} on {result['machine']}.\n"]
    latency_rows, throughput_rows, held_rows, lifecycle_rows, fanout_rows, stdio_rows = [], [], [], [], [], []
    for mode, figures in result["modes"].items():
        for row in figures["latency"]:
            latency_rows.append(
                {
                    "mode": mode,
                    "agents waiting": row["agents"],
                    "answer every ms": row["answers_paced_ms"],
                    "questions": row["questions"],
                    "p50 ms": row["latency"].get("p50_ms"),
                    "p95 ms": row["latency"].get("p95_ms"),
                    "p99 ms": row["latency"].get("p99_ms"),
                    "max ms": row["latency"].get("max_ms"),
                    "floor p50 ms": row["floor"].get("p50_ms"),
                    "floor p99 ms": row["floor"].get("p99_ms"),
                    "p50 ratio": row["ratio_p50"],
                    "lost": row["lost"],
                }
            )
        flat = figures["throughput"]
        if flat:
            throughput_rows.append(
                {
                    "mode": mode,
                    "agents": flat["agents"],
                    "questions": flat["questions"],
                    "answered/s": flat["questions_per_second"],
                    "p50 ms": flat["latency"].get("p50_ms"),
                    "p99 ms": flat["latency"].get("p99_ms"),
                    "floor p50 ms": flat["floor"].get("p50_ms"),
                    "lost": flat["lost"],
                }
            )
        held = figures["held"]
        if held:
            held_rows.append(
                {
                    "mode": mode,
                    "held calls": held["held_calls"],
                    "KiB per call": held["kib_per_held_call"],
                    "RSS before MiB": held["rss_before_mib"],
                    "RSS after MiB": held["rss_after_mib"],
                    "p50 ms alone": held["latency_alone"].get("p50_ms"),
                    "p99 ms alone": held["latency_alone"].get("p99_ms"),
                    "p50 ms holding": held["latency_while_holding"].get("p50_ms"),
                    "p99 ms holding": held["latency_while_holding"].get("p99_ms"),
                    "all let go after hang-up, s": held["seconds_to_mark_all_left_after_hang_up"],
                }
            )
        life = figures["lifecycle"]
        if life:
            lifecycle_rows.append(
                {
                    "mode": mode,
                    "agents": life["agents"],
                    "events": life["events"],
                    "events/s": life["events_per_second"],
                    "pushes": life["pushes_to_dashboard"],
                    "current after p50 ms": life["delay_until_current"].get("p50_ms"),
                    "current after p99 ms": life["delay_until_current"].get("p99_ms"),
                    "never current": life["events_never_current"],
                }
            )
        over_stdio = figures.get("stdio")
        if over_stdio:
            stdio_rows.append(
                {
                    "mode": mode,
                    "questions": over_stdio["questions"],
                    "p50 ms": over_stdio["latency"].get("p50_ms"),
                    "p99 ms": over_stdio["latency"].get("p99_ms"),
                    "max ms": over_stdio["latency"].get("max_ms"),
                    "floor p50 ms": over_stdio["floor"].get("p50_ms"),
                    "p50 ratio": over_stdio["ratio_p50"],
                    "on the dashboard p50 ms": over_stdio["on_the_dashboard"].get("p50_ms"),
                    "on the dashboard p99 ms": over_stdio["on_the_dashboard"].get("p99_ms"),
                    "found by re-reading": over_stdio["found_by_rereading"],
                    "lost": over_stdio["lost"],
                }
            )
        fan = figures["fanout"]
        if fan:
            fanout_rows.append(
                {
                    "mode": mode,
                    "dashboards": fan["dashboards"],
                    "rounds": fan["rounds"],
                    "last p50 ms": fan["until_last_dashboard"].get("p50_ms"),
                    "last max ms": fan["until_last_dashboard"].get("max_ms"),
                    "first p50 ms": fan["until_first_dashboard"].get("p50_ms"),
                }
            )
    sections = [
        ("Answer latency (answer POST sent → ask_question returned)", latency_rows),
        ("Flat out: every question answered the moment it appears", throughput_rows),
        ("Held calls (one worker)", held_rows),
        ("Lifecycle events with a dashboard connected", lifecycle_rows),
        ("Dashboard fan-out (new question → last dashboard has it)", fanout_rows),
        ("An agent over stdio, answered on the server's dashboard (answer POST sent → call returned)", stdio_rows),
    ]
    parts += [f"\n## {title}\n\n{table(rows)}" for title, rows in sections if rows]
    return "".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["embedded", "team", "both"], default="both")
    parser.add_argument("--quick", action="store_true", help="a few of everything (CI's smoke)")
    parser.add_argument("--name", default=None, help="results file name (default: bench-<mode>)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    parser.add_argument(
        "--only", nargs="+", choices=SCENARIOS, default=list(SCENARIOS), help="measure just these (default: all)"
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hookbridge_site.settings")
    limit = raise_open_files_limit()
    modes = ["embedded", "team"] if args.mode == "both" else [args.mode]
    name = args.name or ("bench-quick" if args.quick else f"bench-{args.mode}")
    plan = QUICK if args.quick else FULL
    result: dict[str, Any] = {
        "name": name,
        "taken_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": environment(),
        "open_files_limit": limit,
        "plan": plan,
        "targets": TARGETS,
        "modes": {},
    }
    curves: dict[str, list[float]] = {}
    started = time.monotonic()
    for mode in modes:
        print(f"{mode}:", flush=True)
        result["modes"][mode], mode_curves = asyncio.run(run_mode(mode, plan, tuple(args.only)))
        curves.update(mode_curves)
    result["seconds"] = round(time.monotonic() - started, 1)
    written = write(name, result, markdown(result), args.out)
    written.append(plot_cdf(curves, f"Hook Bridge answer latency ({name})", args.out / f"{name}-latency.png"))
    for path in written:
        print(f"wrote {path}")


if __name__ == "__main__":
    failures.reporting("bench.run", main)
