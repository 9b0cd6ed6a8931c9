"""How long a stdio server takes from its start to its first answer, as an agent host starts it (issue 39).

    python -m bench.stdio_start [--rounds 10] [--name stdio-start]

A host starts the process and writes its first request at once: `server/discover` (2026-07-28), as Claude Code
does; the time is from the start until that answer's line arrives on stdout. Side by side, in interleaved
rounds: the floor (the mcp SDK's own MCPServer with one tool, over stdio: what the SDK alone costs) and Hook
Bridge's `manage.py mcp_stdio --token T` on a database prepared once. Issue 39's target: within 1.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import failures
from bench.report import RESULTS, write
from bench.servers import environment
from testing.live import ROOT, LiveServer, untraced

TARGET_S = 1.5

FLOOR = """
from mcp.server import MCPServer
server = MCPServer("floor", log_level="WARNING")

@server.tool()
def ask_question(question: str) -> str:
    return question

server.run("stdio")
"""

DISCOVER = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "server/discover",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}


def first_answer(command: list[str], env: dict[str, str]) -> float:
    """Seconds from the process's start until its answer to server/discover, written at once, arrives."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write((json.dumps(DISCOVER) + "\n").encode())
        process.stdin.flush()
        while line := process.stdout.readline():
            message = json.loads(line)
            if message.get("id") == 1:
                if "result" not in message:
                    raise RuntimeError(f"{command[:3]}: {message}")
                return time.perf_counter() - started
        raise RuntimeError(f"{command[:3]} ended without an answer")
    finally:
        process.kill()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--name", default="stdio-start")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    # The site's own settings, as people run it; a database prepared once, as after `hookbridge migrate`.
    server = LiveServer(settings="hookbridge_site.settings")
    server.setup()
    server.stop()
    systems: dict[str, tuple[list[str], dict[str, str]]] = {
        "floor": ([sys.executable, "-c", FLOOR], untraced(os.environ)),
        "hookbridge": (
            [sys.executable, "manage.py", "mcp_stdio", "--token", server.tokens["agent-a"]],
            untraced({**server.env, "HOOKBRIDGE_OPEN_BROWSER": "0"}),
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in systems}
    try:
        for round_number in range(1, args.rounds + 1):
            for name, (command, env) in systems.items():  # interleaved: each round starts every system once
                took = first_answer(command, env)
                times[name].append(took)
                print(f"round {round_number}, {name}: {took * 1000:.0f} ms", flush=True)
    finally:
        server.close()
    floor_p50 = statistics.median(times["floor"])
    rows: list[dict[str, Any]] = [
        {
            "system": name,
            "p50_ms": round(statistics.median(took) * 1000),
            "max_ms": round(max(took) * 1000),
            "x_floor_p50": round(statistics.median(took) / floor_p50, 2),
        }
        for name, took in times.items()
    ]
    ours = next(row for row in rows if row["system"] == "hookbridge")
    result = {
        "name": args.name,
        "machine": environment(),
        "rounds": args.rounds,
        "rows": rows,
        "target": {"figure": "hookbridge p50", "within_s": TARGET_S, "met": ours["p50_ms"] <= TARGET_S * 1000},
    }
    lines = [
        f"# stdio: start to the first answer ({args.rounds} interleaved rounds)",
        "",
        "| system | p50 ms | max ms | x floor p50 |",
        "|---|---|---|---|",
        *[f"| {row['system']} | {row['p50_ms']} | {row['max_ms']} | {row['x_floor_p50']} |" for row in rows],
        "",
        f"Target: Hook Bridge answers within {TARGET_S} s: {'met' if result['target']['met'] else 'missed'}.",
    ]
    report = "\n".join(lines) + "\n"
    print(report, flush=True)
    for path in write(args.name, result, report, args.out):
        print(f"wrote {path}")


if __name__ == "__main__":
    failures.reporting("bench.stdio_start", main)
