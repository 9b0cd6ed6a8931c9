"""The TypeScript MCP SDK (what most agent hosts embed), run with the machine's node, driven from a test.

tests/ts/driver.mjs holds the clients; this side sends it commands and reads its events.
`make test` installs the SDK (`npm ci` in tests/ts); without node or the SDK these tests
skip with a message, and fail in CI, which must run them.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

TS_DIR = Path(__file__).resolve().parent.parent / "tests" / "ts"


def require_node_sdk() -> str:
    node = shutil.which("node")
    missing = None
    if node is None:
        missing = "node is not installed"
    elif not (TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        missing = "the TypeScript SDK is not installed (make test runs npm ci in tests/ts)"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}: CI must run the TypeScript SDK tests")
        pytest.skip(missing)
    assert node is not None
    return node


class TsClients:
    """One node process holding any number of TypeScript SDK clients."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.events: list[dict[str, Any]] = []
        self._arrived = asyncio.Condition()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        async for line in self.process.stdout:
            event = json.loads(line)
            async with self._arrived:
                self.events.append(event)
                self._arrived.notify_all()

    async def send(self, **command: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(command) + "\n").encode())
        await self.process.stdin.drain()

    async def wait_for(self, timeout: float = 60, **match: Any) -> dict[str, Any]:
        """The first event (old or new) with every field in `match`."""

        def found() -> dict[str, Any] | None:
            return next((e for e in self.events if all(e.get(k) == v for k, v in match.items())), None)

        try:
            async with asyncio.timeout(timeout), self._arrived:
                await self._arrived.wait_for(lambda: found() is not None or self._reader.done())
        except TimeoutError:
            raise AssertionError(f"no event {match} within {timeout}s; events: {self.events[-10:]}") from None
        event = found()
        if event is None:
            raise AssertionError(f"the node driver ended before {match}; events: {self.events[-10:]}")
        failed = next((e for e in self.events if e.get("event") == "failed"), None)
        assert failed is None, failed
        return event

    def all(self, **match: Any) -> list[dict[str, Any]]:
        return [e for e in self.events if all(e.get(k) == v for k, v in match.items())]

    async def connect(self, client: str, url: str, token: str) -> dict[str, Any]:
        await self.send(op="connect", client=client, url=url, token=token)
        return await self.wait_for(event="connected", client=client)

    async def call(self, client: str, call: str, tool: str, args: dict[str, Any], **options: Any) -> None:
        await self.send(op="call", client=client, call=call, tool=tool, args=args, **options)
        await self.wait_for(event="called", call=call)

    async def outcome(self, call: str, timeout: float = 60) -> dict[str, Any]:
        """The call's result or error event."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            done = [e for e in self.events if e.get("call") == call and e["event"] in ("result", "error")]
            if done:
                return done[0]
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise AssertionError(f"call {call} did not end within {timeout}s; events: {self.events[-10:]}")
            async with self._arrived:
                with suppress(TimeoutError):
                    await asyncio.wait_for(self._arrived.wait(), left)


@asynccontextmanager
async def ts_clients() -> AsyncIterator[TsClients]:
    node = require_node_sdk()
    process = await asyncio.create_subprocess_exec(
        node,
        str(TS_DIR / "driver.mjs"),
        cwd=TS_DIR,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    clients = TsClients(process)
    try:
        yield clients
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()
        clients._reader.cancel()
