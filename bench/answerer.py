"""The person at the dashboard, as a separate process: sees each question arrive and answers it at once.

It logs in, keeps the dashboard's WebSocket open, and for every question that
appears POSTs the dashboard's answer form (with the session cookie, CSRF token
and HX-Request header, as htmx in a browser does). The answer is the question's
id, so the agent can tell which answer it got. Just before each POST it notes
time.perf_counter() (CLOCK_MONOTONIC, one clock for every process on the
machine), so the agent's side can time answer-POST-sent to call-returned.

    python -m bench.answerer URL USERNAME PASSWORD OUT.json [PACE_SECONDS]

With PACE_SECONDS, answers go out one at a time, at least that far apart (a steady
stream of answers below what the worker can take); without it, each as soon as its
question appears (as fast as the worker can take them).

Runs until stdin closes, then writes {"sent": {question_id: t}, "posted": {question_id: t},
"appeared": {question_id: t}, "failed": n} to OUT.json.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from pathlib import Path

import httpx2
import websockets
from websockets.typing import Origin

QUESTION_ID = re.compile(r'data-question-id="([0-9a-f-]{36})"')


async def log_in(http: httpx2.AsyncClient, username: str, password: str) -> None:
    page = await http.get("/accounts/login/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert csrf, "no CSRF token on the login page"
    response = await http.post(
        "/accounts/login/", data={"username": username, "password": password, "csrfmiddlewaretoken": csrf.group(1)}
    )
    assert response.status_code == 302, response.text
    http.headers["X-CSRFToken"] = http.cookies["csrftoken"]
    http.headers["HX-Request"] = "true"


async def answer_everything(
    url: str, username: str, password: str, stop: asyncio.Event, pace: float
) -> dict[str, object]:
    sent: dict[str, float] = {}
    posted: dict[str, float] = {}  # when the answer POST's response came back
    appeared: dict[str, float] = {}  # when the question first reached the dashboard
    seen: set[str] = set()
    failed = 0
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx2.AsyncClient(base_url=url, limits=limits, timeout=60) as http:
        await log_in(http, username, password)
        cookie = "; ".join(f"{name}={value}" for name, value in http.cookies.items())
        ws_url = url.replace("http://", "ws://", 1) + "/ws/dashboard/"
        pending: set[asyncio.Task[None]] = set()
        queue: asyncio.Queue[str] = asyncio.Queue()

        async def answer(question_id: str) -> None:
            nonlocal failed
            sent[question_id] = time.perf_counter()
            response = await http.post(f"/questions/{question_id}/answer", data={"answer": question_id})
            posted[question_id] = time.perf_counter()
            if response.status_code != 200:
                failed += 1

        async def paced() -> None:
            while True:
                await answer(await queue.get())
                await asyncio.sleep(pace)

        pacer = asyncio.create_task(paced()) if pace else None
        async with websockets.connect(
            ws_url, additional_headers={"Cookie": cookie}, origin=Origin(url), max_size=None
        ) as socket:
            print("ready", flush=True)
            stopping = asyncio.create_task(stop.wait())
            while not stop.is_set():
                receiving = asyncio.create_task(socket.recv())
                done, _ = await asyncio.wait({receiving, stopping}, return_when=asyncio.FIRST_COMPLETED)
                if receiving not in done:
                    receiving.cancel()
                    break
                for question_id in QUESTION_ID.findall(str(receiving.result())):
                    if question_id in sent or question_id in seen:
                        continue
                    seen.add(question_id)
                    appeared[question_id] = time.perf_counter()
                    if pacer is not None:
                        queue.put_nowait(question_id)
                        continue
                    task = asyncio.create_task(answer(question_id))
                    pending.add(task)
                    task.add_done_callback(pending.discard)
        if pacer is not None:
            pacer.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    return {"sent": sent, "posted": posted, "appeared": appeared, "failed": failed}


async def main(url: str, username: str, password: str, pace: float) -> dict[str, object]:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not sys.stdin.readline() else None)
    return await answer_everything(url, username, password, stop, pace)


if __name__ == "__main__":
    url, username, password, out = sys.argv[1:5]
    figures = asyncio.run(main(url, username, password, float(sys.argv[5]) if len(sys.argv) > 5 else 0.0))
    Path(out).write_text(json.dumps(figures))
