"""The floor: the least a server on the same `mcp` SDK can do for Hook Bridge's operations.

    python -m bench.floor --port 8766 --database /tmp/floor.sqlite3

A stateless Streamable HTTP server (uvicorn + Starlette, as the SDK builds it) with:
- `ask_question(question)`: writes the question to SQLite and waits on a future;
- `POST /api/mcp-answer {"questionId", "answer"}`: writes the answer and resolves the future
  (404 for an unknown id, as Hook Bridge answers);
- `GET /api/questions`: the pending questions, for the person to find;
- `submit_lifecycle_event(event_type, phase_name)`: writes one row and returns (the floor for a
  lifecycle event: the same SDK round trip and one SQLite write);
- `get_phase_status()`: counts the pending questions and reads the last event (a status read);
- `POST /hooks/claude`: writes the hook event's name as one row and answers `{}` (a host's hook event);
- `noop()`: returns at once.

No authentication, no history, no dashboards: what is left is the SDK, the HTTP server and
one SQLite write per operation, which bench/compare.py runs side by side with Hook Bridge.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sqlite3
import uuid
from typing import Any

import uvicorn
from mcp.server import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from bench import failures


def build(database: str) -> Any:
    db = sqlite3.connect(database, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE IF NOT EXISTS question (id TEXT PRIMARY KEY, text TEXT, answer TEXT)")
    db.execute("CREATE TABLE IF NOT EXISTS event (id INTEGER PRIMARY KEY, event_type TEXT, phase_name TEXT)")
    pending: dict[str, tuple[str, asyncio.Future[str]]] = {}
    server: MCPServer = MCPServer("floor", log_level="WARNING")

    @server.tool()
    async def ask_question(question: str) -> dict[str, str]:
        question_id = str(uuid.uuid4())
        db.execute("INSERT INTO question (id, text) VALUES (?, ?)", (question_id, question))
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        pending[question_id] = (question, future)
        try:
            return {"answer": await future}
        finally:
            pending.pop(question_id, None)

    @server.tool()
    async def submit_lifecycle_event(event_type: str, phase_name: str = "") -> dict[str, str]:
        db.execute("INSERT INTO event (event_type, phase_name) VALUES (?, ?)", (event_type, phase_name))
        return {"status": "ok"}

    @server.tool()
    async def get_phase_status() -> dict[str, Any]:
        last = db.execute("SELECT event_type, phase_name FROM event ORDER BY id DESC LIMIT 1").fetchone()
        return {"pendingQuestions": len(pending), "lastLifecycleEvent": last}

    @server.tool()
    async def noop() -> str:
        return "ok"

    async def hook(request: Request) -> JSONResponse:
        body = await request.json()
        event = body.get("hook_event_name") if isinstance(body, dict) else None
        db.execute("INSERT INTO event (event_type, phase_name) VALUES (?, ?)", (str(event), "hook"))
        return JSONResponse({})

    async def answer(request: Request) -> JSONResponse:
        body = await request.json()
        question_id, text = body.get("questionId"), body.get("answer")
        waiting = pending.get(question_id) if isinstance(question_id, str) else None
        if waiting is None or waiting[1].done():
            return JSONResponse({"error": f"no question {question_id}"}, status_code=404)
        db.execute("UPDATE question SET answer = ? WHERE id = ?", (text, question_id))
        waiting[1].set_result(text)
        return JSONResponse({"id": question_id, "status": "answered", "answer": {"text": text}})

    async def questions(request: Request) -> JSONResponse:
        listed = [{"id": key, "question": text, "status": "pending"} for key, (text, _) in pending.items()]
        return JSONResponse({"questions": listed})

    app = server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True)
    app.router.routes.extend(
        [
            Route("/api/mcp-answer", answer, methods=["POST"]),
            Route("/api/questions", questions),
            Route("/hooks/claude", hook, methods=["POST"]),
        ]
    )
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--database", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    uvicorn.run(build(args.database), host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    failures.reporting("bench.floor", main)
