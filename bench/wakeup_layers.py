"""Answer wake-up latency: channels-redis's core layer against its pub/sub layer.

What the blocking wait does, measured on each: a waiting call has joined its
question's group and waits on its channel; the answer's on-commit hook sends to
the group. Timed from group_send until the waiter has the message, with 1 and
with 100 calls waiting at once (each woken by its own question's group).

    python bench/wakeup_layers.py [--redis redis://127.0.0.1:6379/0] [--rounds 300]

Writes bench/results/wakeup_layers.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from channels_redis.core import RedisChannelLayer
from channels_redis.pubsub import RedisPubSubChannelLayer

LAYERS = {"core (RedisChannelLayer)": RedisChannelLayer, "pub/sub (RedisPubSubChannelLayer)": RedisPubSubChannelLayer}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def one_round(layer: Any, waiters: int) -> list[float]:
    prefix = uuid.uuid4().hex[:8]
    channels = [await layer.new_channel("bench.wait") for _ in range(waiters)]
    groups = [f"question.{prefix}{n}" for n in range(waiters)]
    for group, channel in zip(groups, channels, strict=True):
        await layer.group_add(group, channel)
    sent: dict[str, float] = {}
    latencies: list[float] = []

    async def wait(channel: str) -> None:
        message = await layer.receive(channel)
        latencies.append(time.perf_counter() - sent[message["group"]])

    tasks = [asyncio.create_task(wait(channel)) for channel in channels]
    await asyncio.sleep(0.01)  # every waiter is parked on receive
    for group in groups:
        sent[group] = time.perf_counter()
        await layer.group_send(group, {"type": "question.resolved", "group": group})
    await asyncio.wait_for(asyncio.gather(*tasks), 30)
    for group, channel in zip(groups, channels, strict=True):
        await layer.group_discard(group, channel)
    return latencies


async def measure(layer_class: type, redis: str, rounds: int, waiters: int) -> dict[str, float]:
    layer = layer_class(hosts=[redis])
    latencies: list[float] = []
    await one_round(layer, waiters)  # warm up connections
    for _ in range(max(1, rounds // waiters)):
        latencies += await one_round(layer, waiters)
    if hasattr(layer, "flush"):
        await layer.flush()
    ms = [value * 1000 for value in latencies]
    return {
        "samples": len(ms),
        "p50_ms": round(statistics.median(ms), 3),
        "p95_ms": round(percentile(ms, 0.95), 3),
        "p99_ms": round(percentile(ms, 0.99), 3),
        "max_ms": round(max(ms), 3),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--rounds", type=int, default=300, help="wake-ups per layer and concurrency")
    args = parser.parse_args()
    results: dict[str, Any] = {
        "machine": f"{platform.node()} {platform.machine()} {platform.python_version()}",
        "runs": [],
    }
    for waiters in (1, 100):
        for name, layer_class in LAYERS.items():
            figures = await measure(layer_class, args.redis, args.rounds if waiters == 1 else args.rounds * 10, waiters)
            results["runs"].append({"layer": name, "waiting_calls": waiters, **figures})
    out = Path(__file__).parent / "results" / "wakeup_layers.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print("| layer | waiting calls | samples | p50 ms | p95 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|---|---|")
    for run in results["runs"]:
        print(
            f"| {run['layer']} | {run['waiting_calls']} | {run['samples']} | {run['p50_ms']} | {run['p95_ms']} "
            f"| {run['p99_ms']} | {run['max_ms']} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
