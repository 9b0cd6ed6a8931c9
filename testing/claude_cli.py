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
from testing.terminal import Terminal

CLAUDE = ROOT / "tests" / "claude_code" / "node_modules" / ".bin" / "claude"
API_KEY = "sk-stand-in"
# The model the CLI is told to use (the stand-in answers any). This CLI marks it retired from 2026-11-30: a
# warning line on its screen, though it still runs it (seen with the clock moved on by libfaketime). With a newer
# model (claude-sonnet-4-6) its terminal UI starts in auto mode instead, behind an announcement to dismiss.
MODEL = "claude-sonnet-4-5"
# A model this CLI's terminal UI starts in auto mode with (MODEL starts in Manual mode).
AUTO_MODEL = "claude-sonnet-4-6"
VERSION = (
    json.loads((CLAUDE.parent.parent / "@anthropic-ai" / "claude-code" / "package.json").read_text())["version"]
    if CLAUDE.exists()
    else ""
)


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
        deadline = time.monotonic() + 30
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


def used_home(home: Path, project: Path, mcp: dict[str, Any] | None = None, allowed: tuple[str, ...] = ()) -> None:
    """A home prepared as a used install's is, for the CLI's terminal UI: onboarding done, `project` trusted,
    the API key approved; `mcp` added as the user's MCP server `hookbridge`, `allowed` tools allowed."""
    (home / ".claude").mkdir(parents=True)
    state: dict[str, Any] = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": VERSION,
        "numStartups": 10,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {
            str(project): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True, "allowedTools": []}
        },
    }
    if mcp is not None:
        state["mcpServers"] = {"hookbridge": mcp}
    (home / ".claude.json").write_text(json.dumps(state))
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": list(allowed)}}))


def claude_terminal(project: Path, env: dict[str, str], *args: str, model: str = MODEL) -> Terminal:
    """The CLI's terminal UI in tmux, in `project`."""
    return Terminal(project, env, str(CLAUDE), "--model", model, *args)


def terminal_env(model: Model, home: Path, token: str) -> dict[str, str]:
    # With tool search on, the CLI shows its model MCP tools only after a ToolSearch call, which the script does
    # not make; a person's model makes it, and the call that follows is the same.
    # The terminal is tmux's whatever the suite was started from (CI may have no TERM at all).
    return {**cli_env(model, home, token), "ENABLE_TOOL_SEARCH": "false", "TERM": "screen-256color"}
