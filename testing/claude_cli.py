"""The real Claude Code CLI (tests/claude_code, from npm) run offline: the scripted model it talks to
(testing.model_stand_in) and the environment that keeps a tester's own ~/.claude out of it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testing.live import ROOT, free_port

CLAUDE = ROOT / "tests" / "claude_code" / "node_modules" / ".bin" / "claude"
API_KEY = "sk-stand-in"


@dataclass
class Model:
    port: int
    requests_file: Path

    def requests(self) -> list[dict[str, Any]]:
        if not self.requests_file.exists():
            return []
        # The stand-in may be writing a request as this reads: a line without its newline is not whole yet.
        lines = self.requests_file.read_text().split("\n")[:-1]
        return [json.loads(line) for line in lines]


@contextmanager
def scripted_model(command: str, folder: Path) -> Iterator[Model]:
    """The stand-in model, scripted with `command` (testing.model_stand_in), on a free port until the block ends."""
    found = Model(free_port(), folder / "model-requests.jsonl")
    with stand_in("testing.model_stand_in", found, command):
        yield found


@contextmanager
def stand_in(module: str, model: Model, command: str) -> Iterator[None]:
    """`python -m <module> PORT COMMAND REQUESTS_FILE` (a scripted model API) running until the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", module, str(model.port), command, str(model.requests_file)],
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", model.port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"the stand-in {module} did not start"
                time.sleep(0.1)
        yield
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(10)


def cli_env(model: Model, home: Path, token: str) -> dict[str, str]:
    keep = ("PATH", "LANG", "TERM")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    env.update(
        {
            # A home of its own: the tester's ~/.claude.json and settings stay out of it.
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{model.port}",
            "ANTHROPIC_API_KEY": API_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "HOOKBRIDGE_TOKEN": token,
        }
    )
    return env
