"""A worker's responsiveness from a process of its own: `python -m bench.probe URL SECONDS [HEADERS_JSON]`.

Sends GET URL every 50 ms for SECONDS, one at a time, and prints one JSON line per probe:
{"sent": perf_counter when sent, "took": seconds, "status": HTTP status or 0}. perf_counter is
CLOCK_MONOTONIC, one clock for every process on the machine, so the caller can line the probes up
with its own events. Its own process: a load generator busy hanging up thousands of calls would
otherwise delay the probes itself and blame the worker.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import httpx2


async def main(url: str, seconds: float, headers: dict[str, str]) -> None:
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        stop_at = time.perf_counter() + seconds
        while time.perf_counter() < stop_at:
            sent = time.perf_counter()
            try:
                status = (await http.get(url)).status_code
            except httpx2.HTTPError:
                status = 0
            print(json.dumps({"sent": sent, "took": time.perf_counter() - sent, "status": status}), flush=True)
            await asyncio.sleep(0.05)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}))
