"""Where a worker's time goes, by scenario: py-spy samples a real daphne worker while the bench drives it.

    .venv/bin/python -m bench.profile bare_404 answer events held hangups

Each scenario runs against a fresh embedded worker (as `make serve` runs it, with the bench's settings), warmed
first, and recorded by `py-spy record` at 250 samples a second of whichever thread holds the GIL (daphne's loop or
a thread of the sync views' pool): the worker's Python time, not a thread waiting to take the GIL back after a
system call, which py-spy would otherwise count in the frame that made the call. It prints, for each, the frames
with the most samples of their own (self) and the functions of ours with the most including what they call
(total), as shares of the busy samples: the "top frames" docs/performance.md quotes before and after a change.
The raw stacks stay in bench/results/profile-<scenario>.txt (py-spy's collapsed format, for a flame graph).

py-spy is a development dependency; it reads the worker's memory, so the kernel must let this user trace its own
processes (ptrace_scope 0 or 1 with the worker as our child: it is).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2

from bench.servers import Setup, agent, embedded, raise_open_files_limit
from testing.live import ROOT

RESULTS = Path(__file__).resolve().parent / "results"
OURS = ("approvals/", "audit/", "core/", "dashboard/", "hookbridge_site/", "hooks/", "hosts/", "identity/",
        "lifecycle/", "mcpapi/", "notify/", "projects/", "questions/", "tokens/")  # fmt: skip


async def bare_404(setup: Setup, seconds: float) -> int:
    """Answer POSTs for questions that do not exist, one after another (bench.compare's bare 404)."""
    server = setup.answer_side
    done = 0
    async with httpx2.AsyncClient(headers=server.auth("answer-bot"), timeout=30) as http:
        end = asyncio.get_running_loop().time() + seconds
        while asyncio.get_running_loop().time() < end:
            body = {"questionId": str(uuid.uuid4()), "answer": "ok"}
            response = await http.post(f"{server.url}/api/mcp-answer", json=body)
            assert response.status_code == 404, response.text
            done += 1
    return done


async def answer(setup: Setup, seconds: float) -> int:
    """An agent asks, a bot on the JSON API finds the question and answers it at once, over and over."""
    server = setup.answer_side
    done = 0
    async with (
        agent(setup.agent_side) as client,
        httpx2.AsyncClient(headers=server.auth("answer-bot"), timeout=30) as http,
    ):
        end = asyncio.get_running_loop().time() + seconds
        while asyncio.get_running_loop().time() < end:
            text = f"profile {uuid.uuid4()}"
            call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
            while True:
                listed = (await http.get(f"{server.url}/api/questions?status=pending")).json()["questions"]
                found = [q["id"] for q in listed if q["question"] == text]
                if found:
                    break
                await asyncio.sleep(0.002)
            response = await http.post(f"{server.url}/api/mcp-answer", json={"questionId": found[0], "answer": "ok"})
            assert response.status_code == 200, response.text
            result = await call
            assert not result.is_error, result
            done += 1
    return done


async def events(setup: Setup, seconds: float) -> int:
    """Ten agents sending lifecycle events flat out (bench.compare's events a second)."""
    end = asyncio.get_running_loop().time() + seconds
    counts = [0] * 10

    async def one(n: int) -> None:
        async with agent(setup.agent_side) as client:
            while asyncio.get_running_loop().time() < end:
                arguments = {"event_type": "task-started", "phase_name": f"p{counts[n]}"}
                result = await client.call_tool("submit_lifecycle_event", arguments)
                assert not result.is_error, result
                counts[n] += 1

    await asyncio.gather(*(one(n) for n in range(10)))
    return sum(counts)


async def _hold(setup: Setup, stack: contextlib.AsyncExitStack, count: int, tag: str) -> list[asyncio.Task[Any]]:
    """`count` ask_question calls held, a hundred at a time to an agent each, as bench.load opens them (a worker
    queues at most HOOKBRIDGE_QUEUED_ASKS asks at once and refuses the rest)."""
    calls: list[asyncio.Task[Any]] = []
    for start in range(0, count, 100):
        client = await stack.enter_async_context(agent(setup.agent_side))
        calls += [
            asyncio.create_task(client.call_tool("ask_question", {"question": f"{tag} {n}"}))
            for n in range(start, min(count, start + 100))
        ]
        while await asyncio.to_thread(setup.count_pending) < len(calls):
            if ended := [call for call in calls if call.done()]:
                said = ended[0].exception() or ended[0].result()
                raise RuntimeError(f"{len(ended)} held calls ended early, the first with {said!r:.300}")
            await asyncio.sleep(0.05)
    return calls


async def _hang_up(setup: Setup, calls: list[asyncio.Task[Any]]) -> None:
    for call in calls:
        call.cancel()
    await asyncio.gather(*calls, return_exceptions=True)
    while await asyncio.to_thread(setup.count_pending) > 0:  # noqa: ASYNC110  (the database is the one to ask)
        await asyncio.sleep(0.05)


async def held(setup: Setup, seconds: float) -> int:
    """500 ask_question calls opened at once and held (bench.compare's opening 500 held calls), then let go."""
    del seconds  # the scenario is the opening, however long it takes
    async with contextlib.AsyncExitStack() as stack:
        calls = await _hold(setup, stack, 500, "held")
        await _hang_up(setup, calls)
    return 500


async def hangups(setup: Setup, seconds: float) -> int:
    """2,000 held calls, then every agent hangs up at once (bench.compare's hang-ups); the opening is recorded too."""
    del seconds
    async with contextlib.AsyncExitStack() as stack:
        calls = await _hold(setup, stack, 2000, "gone")
    await _hang_up(setup, calls)
    return 2000


RECORD = ["--rate", "250", "--threads", "--gil", "--format", "raw", "--nonblocking"]
# Where a thread waits, not works: the event loop's select and a pool thread waiting for its next job.
IDLE = {"EpollSelector.select (selectors.py)", "_worker (concurrent/futures/thread.py)"}

SCENARIOS: dict[str, Callable[[Setup, float], Awaitable[int]]] = {
    "bare_404": bare_404,
    "answer": answer,
    "events": events,
    "held": held,
    "hangups": hangups,
}


def summarise(raw: Path, top: int) -> str:
    """The top frames of a collapsed-stacks file: self time, and total time through each function of ours."""
    own: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    samples = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        frames = [f for f in stack.split(";") if not f.startswith("process ") and not f.startswith("thread ")]
        if not frames or _short(frames[-1]) in IDLE:
            continue
        samples += n
        if frames:
            own[_short(frames[-1])] += n
        for frame in {_short(f) for f in frames if any(f"({part}" in f or f" {part}" in f for part in OURS)}:
            total[frame] += n
    lines = [f"{samples} busy samples", "", "self:"]
    lines += [f"  {100 * n / samples:5.1f}%  {frame}" for frame, n in own.most_common(top)]
    lines += ["", "total, through our functions:"]
    lines += [f"  {100 * n / samples:5.1f}%  {frame}" for frame, n in total.most_common(top)]
    return "\n".join(lines)


def _short(frame: str) -> str:
    """`handle (mcpapi/views.py:42)` → `handle (mcpapi/views.py)`: a function counts once, whatever its line."""
    name, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    for marker in ("site-packages/", "/lib/python3."):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    else:
        path = os.path.relpath(path, Path(__file__).resolve().parent.parent) if path.startswith("/") else path
    return f"{name} ({path})"


async def profile(name: str, seconds: float, top: int, out: Path = RESULTS, root: Path = ROOT) -> str:
    py_spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if py_spy is None:
        raise SystemExit("py-spy is not installed: make install-dev")
    raw = out / f"profile-{name}.txt"
    with embedded(root, HOOKBRIDGE_MAX_WAITING_PER_TOKEN="100000") as setup:
        assert setup.agent_side.process is not None
        # Warm: the first requests import the URLconf's views and fill the caches, once a process.
        await answer(setup, 1)
        await bare_404(setup, 0.5)
        recorder = subprocess.Popen(  # noqa: ASYNC220  (started before anything is measured)
            [py_spy, "record", "--pid", str(setup.agent_side.process.pid), *RECORD, "--output", str(raw)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        await asyncio.sleep(1)  # py-spy attaches
        done = await SCENARIOS[name](setup, seconds)
        recorder.send_signal(signal.SIGINT)
        _, errors = await asyncio.to_thread(recorder.communicate)
        if recorder.returncode not in (0, -signal.SIGINT) or not raw.exists():
            raise SystemExit(f"py-spy failed: {errors.decode()}")
    return f"## {name}: {done} done\n\n{summarise(raw, top)}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenarios", nargs="*", default=list(SCENARIOS), choices=list(SCENARIOS))
    parser.add_argument("--seconds", type=float, default=10, help="how long the timed scenarios run")
    parser.add_argument("--top", type=int, default=15, help="frames listed in each table")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the raw stacks go")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the checkout the worker runs (git worktree add DIR REV: a baseline)"
    )
    args = parser.parse_args()
    raise_open_files_limit()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.scenarios:
        sys.stdout.write(asyncio.run(profile(name, args.seconds, args.top, args.out, args.root)) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
