"""Faults, counted: `make soak` (or python -m bench.soak). No answer may be lost.

Team mode: two daphne workers on a fresh PostgreSQL database and a Redis of the
soak's own. For a bounded time, agents ask on either worker; some disconnect
mid-wait at random and ask again (on either worker), as an agent that was
interrupted does. An answering bot answers every open question through the JSON
API of a random worker, and sometimes on both workers at once. Meanwhile Redis
is restarted, and later one worker is restarted. When time is up the agents
finish what they asked, then the database is compared with what they got.

    python -m bench.soak [--seconds 60] [--agents 20] [--quick] [--name soak]

Reports questions asked, answers given, answers delivered, duplicates created and
answers lost (which must be 0); exits with status 1 if any answer was lost, any
answer reached the wrong agent, or a question was duplicated.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import random
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2

from bench import failures
from bench.report import RESULTS, table, write
from bench.servers import BENCH_ENV, agent, environment, raise_open_files_limit
from testing.live import LiveServer
from testing.team import OwnRedis, fresh_postgres_database, require_team_services


class Soak:
    def __init__(self, workers: list[LiveServer], seconds: float, agents: int, seed: int) -> None:
        self.workers = workers
        self.seconds = seconds
        self.agents = agents
        self.random = random.Random(seed)
        self.asked: set[str] = set()
        self.delivered: dict[str, str] = {}
        self.wrong: list[tuple[str, str]] = []
        self.disconnects = 0
        self.cancelled_at: dict[str, list[datetime.datetime]] = {}
        self.stuck_on_stop: list[str] = []
        self.call_errors = 0
        self.answers_given = 0
        self.answers_refused = 0
        self.answer_errors = 0
        self.double_answers = 0
        self.events: list[tuple[float, str]] = []
        self.started = 0.0
        self.asking = True

    def note(self, what: str) -> None:
        self.events.append((round(time.monotonic() - self.started, 1), what))
        print(f"  {self.events[-1][0]:6.1f} s  {what}", flush=True)

    def worker(self) -> LiveServer:
        return self.random.choice(self.workers)

    async def until_answered(self, text: str) -> None:
        """Ask, and ask again after every disconnect or error, until the answer arrives."""
        self.asked.add(text)
        while True:
            server = self.worker()
            disconnect_after = self.random.uniform(0.05, 1.5) if self.random.random() < 0.3 else None
            call: asyncio.Task[Any] | None = None
            try:
                async with agent(server) as client:
                    call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
                    if disconnect_after is not None:
                        done, _ = await asyncio.wait({call}, timeout=disconnect_after)
                        if not done and call.cancel():  # the agent goes away mid-wait
                            await asyncio.gather(call, return_exceptions=True)
                            self.disconnects += 1
                            # When, on the database's clock: an answer on the wire right then is dropped.
                            self.cancelled_at.setdefault(text, []).append(datetime.datetime.now(datetime.UTC))
                            continue
                    result = await call
            except Exception:
                if call is not None:
                    call.cancel()
                    await asyncio.gather(call, return_exceptions=True)
                # The worker is restarting, or its connection dropped: ask again, as an agent would.
                self.call_errors += 1
                await asyncio.sleep(0.2)
                continue
            answer = (result.structured_content or {}).get("answer")
            if result.is_error or not isinstance(answer, str):
                self.call_errors += 1
                await asyncio.sleep(0.2)
                continue
            self.delivered[text] = answer
            if answer != expected_answer(text):
                self.wrong.append((text, answer))
            return

    async def agent_loop(self, index: int) -> None:
        n = 0
        while self.asking:
            await self.until_answered(f"soak agent {index} question {n} ({uuid.uuid4().hex[:6]})")
            n += 1

    async def answer_loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            server = self.worker()
            try:
                async with httpx2.AsyncClient(headers=server.auth("answer-bot"), timeout=10) as http:
                    # A question whose agent hung up stays pending (and answerable) for its re-ask.
                    response = await http.get(f"{server.url}/api/questions", params={"status": "pending"})
                    response.raise_for_status()
                    open_questions = response.json()["questions"]
                    for question in open_questions:
                        both = self.random.random() < 0.2
                        targets = self.workers if both else [self.worker()]
                        if both:
                            self.double_answers += 1
                        results = await asyncio.gather(
                            *(self.answer(target, question) for target in targets), return_exceptions=True
                        )
                        self.answer_errors += sum(1 for r in results if isinstance(r, BaseException))
            except Exception:
                self.answer_errors += 1  # a worker restarting
            await asyncio.sleep(0.05)

    async def answer(self, server: LiveServer, question: dict[str, Any]) -> None:
        async with httpx2.AsyncClient(headers=server.auth("answer-bot"), timeout=10) as http:
            response = await http.post(
                f"{server.url}/api/mcp-answer",
                json={"questionId": question["id"], "answer": expected_answer(question["question"])},
            )
        if response.status_code == 200:
            self.answers_given += 1
        elif response.status_code == 409:
            self.answers_refused += 1  # the other worker's answer won: first answer wins
        else:
            raise RuntimeError(f"answer refused: {response.status_code} {response.text}")


def stop_or_kill(server: LiveServer, run: Soak, grace: float = 15.0) -> float:
    """SIGTERM, as systemd stops a worker; one that is still there after the grace period is dumped and killed."""
    assert server.process is not None
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    try:
        server.process.wait(grace)
    except subprocess.TimeoutExpired:
        py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        dump = subprocess.run([py_spy, "dump", "-p", str(server.process.pid)], capture_output=True, text=True)
        run.stuck_on_stop.append(dump.stdout[-6000:] + dump.stderr[-500:] + "\n--- log ---\n" + server.log()[-4000:])
        run.note(f"worker :{server.port} still running {grace:g} s after SIGTERM: killed (stacks kept in the results)")
        server.process.kill()
        server.process.wait()
    return time.monotonic() - started


def expected_answer(text: str) -> str:
    return f"re: {text}"


def abandoned_in_flight(details: list[tuple[Any, ...]], cancelled_at: dict[str, list[datetime.datetime]]) -> int:
    """Duplicates whose earlier question was delivered (the whole response sent) as its agent hung up."""
    # The harness's one event loop runs every agent, so a response can sit in its socket for a
    # second or more before the agent reads it; a hang-up within that window dropped a sent answer.
    window = datetime.timedelta(seconds=2)
    count = 0
    for index, (text, _status, _reason, _created, _resolved, delivered) in enumerate(details):
        superseded = index + 1 < len(details) and details[index + 1][0] == text  # a later row has the same text
        if not superseded or delivered is None:
            continue
        if any(delivered - window <= cancel <= delivered + window for cancel in cancelled_at.get(text, [])):
            count += 1
    return count


def count_database(database_url: str) -> dict[str, Any]:
    import psycopg

    with psycopg.connect(database_url.replace("postgres://", "postgresql://", 1)) as db:
        rows = db.execute("SELECT text, status FROM questions_question").fetchall()
        per_text = Counter(text for text, _ in rows)
        duplicated = [text for text, n in per_text.items() if n > 1]
        details = db.execute(
            "SELECT text, status, cancel_reason, created_at, resolved_at, delivered_at FROM questions_question"
            " WHERE text = ANY(%s) ORDER BY text, created_at",
            (duplicated,),
        ).fetchall()
    return {
        "rows": len(rows),
        "answered": {text for text, status in rows if status == "answered"},
        "duplicated_texts": {text: per_text[text] for text in duplicated},
        "duplicate_details": details,
        "duplicate_rows": [[str(value) for value in row] for row in details],
        "statuses": dict(Counter(status for _, status in rows)),
    }


async def soak(seconds: float, agents: int, seed: int, faults: set[str]) -> dict[str, Any]:
    require_team_services()
    redis = OwnRedis()
    redis.start()
    try:
        with fresh_postgres_database(migrated=True) as database_url:
            shared = {**BENCH_ENV, "DATABASE_URL": database_url, "REDIS_URL": redis.url, "HOOKBRIDGE_MAX_HOLD": "60"}
            first = LiveServer(env_overrides=shared)
            first.setup()
            second = LiveServer(env_overrides=shared, prepare=False, tokens=first.tokens)
            try:
                second.setup()
                run = Soak([first, second], seconds, agents, seed)
                result = await drive(run, redis, second, faults)
                counted = count_database(database_url)
            finally:
                second.close()
                first.close()
    finally:
        redis.stop()
    lost = sorted(text for text in counted["answered"] if text in run.asked and text not in run.delivered)
    abandoned = abandoned_in_flight(counted["duplicate_details"], run.cancelled_at)
    return {
        "seconds": seconds,
        "agents": agents,
        "seed": seed,
        "questions_asked": len(run.asked),
        "question_rows": counted["rows"],
        "answers_given": run.answers_given,
        "second_answers_refused": run.answers_refused,
        "answered_on_both_workers_at_once": run.double_answers,
        "answers_delivered": len(run.delivered),
        "duplicates_created": sum(n - 1 for n in counted["duplicated_texts"].values()),
        # An agent that hung up while its answer was on the wire dropped it; its re-ask is a new question.
        "duplicates_after_agent_dropped_a_delivered_answer": abandoned,
        "answers_lost": len(lost),
        "wrong_answers": len(run.wrong),
        "disconnects": run.disconnects,
        "calls_failed_and_retried": run.call_errors,
        "answer_posts_failed": run.answer_errors,
        "statuses": counted["statuses"],
        "faults": run.events,
        "faults_injected": sorted(faults),
        "workers_stuck_on_stop": run.stuck_on_stop,
        "lost_examples": lost[:5],
        "duplicate_rows": counted["duplicate_rows"],
        **result,
    }


async def drive(run: Soak, redis: OwnRedis, restartable: LiveServer, faults: set[str]) -> dict[str, Any]:
    run.started = time.monotonic()
    stop_answering = asyncio.Event()
    answerer = asyncio.create_task(run.answer_loop(stop_answering))
    agents = [asyncio.create_task(run.agent_loop(i)) for i in range(run.agents)]
    run.note(f"{run.agents} agents asking on two workers")

    await asyncio.sleep(run.seconds / 3)
    if "redis" in faults:
        run.note("Redis stopped")
        await asyncio.to_thread(redis.stop)
        await asyncio.sleep(1)
        await asyncio.to_thread(redis.start)
        run.note("Redis started again")

    await asyncio.sleep(run.seconds / 3)
    if "worker" in faults:
        run.note(f"worker :{restartable.port} sent SIGTERM")
        took = await asyncio.to_thread(stop_or_kill, restartable, run)
        await asyncio.to_thread(restartable.start)
        run.note(f"worker :{restartable.port} started again (it took {took:.1f} s to stop)")

    await asyncio.sleep(max(0.0, run.seconds - (time.monotonic() - run.started)))
    run.asking = False
    run.note("time is up: agents finish the questions they asked")
    try:
        await asyncio.wait_for(asyncio.gather(*agents), 120)
    except TimeoutError:
        run.note("some agents never got their answer within 120 s")
        for task in agents:
            task.cancel()
        await asyncio.gather(*agents, return_exceptions=True)
    stop_answering.set()
    await answerer
    return {"run_seconds": round(time.monotonic() - run.started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--faults", default="redis,worker", help="which faults to inject: redis, worker, both or none")
    parser.add_argument("--quick", action="store_true", help="10 s, 4 agents (CI's smoke)")
    parser.add_argument("--name", default="soak")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.agents = 10.0, 4
    raise_open_files_limit()
    faults = {fault.strip() for fault in args.faults.split(",") if fault.strip() and fault.strip() != "none"}
    if faults - {"redis", "worker"}:
        parser.error(f"--faults takes redis and/or worker, got {args.faults!r}")
    figures = asyncio.run(soak(args.seconds, args.agents, args.seed, faults))
    result = {
        "name": args.name,
        "taken_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": environment(),
        **figures,
    }
    keys = [
        "questions_asked", "answers_given", "answers_delivered", "duplicates_created",
        "duplicates_after_agent_dropped_a_delivered_answer", "answers_lost", "wrong_answers", "disconnects",
        "calls_failed_and_retried", "second_answers_refused",
    ]  # fmt: skip
    markdown = (
        f"# Hook Bridge soak: {args.name}\n\nTaken {result['taken_at']}: {args.agents} agents for {args.seconds:g} s "
        f"on two workers (PostgreSQL, Redis); faults: {', '.join(sorted(faults)) or 'none'}.\n\n"
        + table([{key: figures[key] for key in keys}])
        + "\n## Faults\n\n"
        + "".join(f"- {at} s: {what}\n" for at, what in figures["faults"])
    )
    for path in write(args.name, result, markdown, args.out):
        print(f"wrote {path}")
    print(table([{key: figures[key] for key in keys}]))
    unexplained = figures["duplicates_created"] - figures["duplicates_after_agent_dropped_a_delivered_answer"]
    if figures["answers_lost"] or figures["wrong_answers"] or unexplained:
        raise SystemExit(1)


if __name__ == "__main__":
    failures.reporting("bench.soak", main)
