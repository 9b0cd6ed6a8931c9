"""A plugins folder and a workspace for the hooks tests, and helpers to call hooks and watch their processes."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from testing.live import LiveServer, sqlite_at, text_of
from testing.live import process_alive as alive

LINT = (
    'echo "lint in ${PWD##*/}"; echo "$PWD" >> "$HOOK_TEST_LOG"; '
    'if [ -f FAIL ]; then echo "lint error in ${PWD##*/}" >&2; exit 3; fi'
)
# Starts a child that would sleep for five minutes, notes its pid, and waits for it.
SLEEPER = 'sleep 300 & echo $! > "$HOOK_TEST_PIDS/{name}.pid"; wait'

PLUGINS: dict[str, dict[str, Any]] = {
    "jutsu-typescript/han-config.json": {
        "hooks": {
            "lint": {
                "command": LINT,
                "dirsWith": ["package.json"],
                "description": "Lints the TypeScript code.",
                "triggers": ["lint the code", "check the style"],
            },
            "typecheck": {"command": "echo typecheck", "annotations": {"title": "Check Types", "readOnlyHint": True}},
        }
    },
    "do-shell/hooks/han-config.json": {
        "hooks": {
            "whereami": {"command": 'pwd; echo "$PWD" >> "$HOOK_TEST_LOG"'},
            "sleepy": {"command": SLEEPER.format(name="sleepy"), "timeout": 1.5},
            "slow": {"command": SLEEPER.format(name="slow")},
            "env": {"command": 'echo "root=$CLAUDE_PLUGIN_ROOT"; echo "secret=${SECRET_KEY:-unset}"'},
            # Says one thing, waits for the test to have heard it, says more.
            "chatty": {
                "command": 'echo "step one"; n=0; while [ ! -e "$HOOK_TEST_PIDS/go" ] && [ $n -lt 200 ]; '
                'do sleep 0.05; n=$((n+1)); done; echo "step two"'
            },
            "flood": {"command": "seq 1 1000"},
            "noisy": {"command": "head -c 20000 /dev/zero | tr '\\0' x; echo; echo the-end; exit 1"},
        }
    },
    "broken/han-config.json": {"hooks": {"lint": {"dirsWith": ["package.json"]}}},
}


class HookWorld:
    """A plugins folder, a workspace with three packages (one failing), and a folder outside it."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.plugins = base / "plugins"
        self.workspace = base / "workspace"
        self.outside = base / "outside"
        self.log = base / "ran.log"
        self.pids = base / "pids"
        for relative, config in PLUGINS.items():
            path = self.plugins / relative
            path.parent.mkdir(parents=True)
            path.write_text(json.dumps(config))
        for package in ("a", "b", "c"):
            (self.workspace / "packages" / package).mkdir(parents=True)
            (self.workspace / "packages" / package / "package.json").write_text("{}")
        (self.workspace / "packages" / "b" / "FAIL").write_text("")
        (self.workspace / "node_modules" / "dep").mkdir(parents=True)
        (self.workspace / "node_modules" / "dep" / "package.json").write_text("{}")
        self.outside.mkdir()
        (self.outside / "package.json").write_text("{}")
        (self.workspace / "escape").symlink_to(self.outside, target_is_directory=True)
        (self.workspace / "$(touch pwned)").mkdir()
        self.pids.mkdir()
        self.log.write_text("")

    def ran(self) -> list[str]:
        return [
            Path(line).relative_to(self.workspace.resolve()).as_posix() for line in self.log.read_text().splitlines()
        ]

    def runs(self, server: LiveServer) -> list[dict[str, Any]]:
        with sqlite_at(server.tmp / "db.sqlite3") as db:
            db.row_factory = sqlite3.Row
            return [dict(row) for row in db.execute("SELECT * FROM hooks_hookrun ORDER BY started_at")]


def _contents(path: Path) -> str:
    return path.read_text().strip() if path.exists() else ""


async def wait_for_file(path: Path, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text := _contents(path):
            return text
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


async def gone_within(pid: int, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def call(server: LiveServer, tool: str, **arguments: Any) -> tuple[bool, str, dict[str, Any]]:
    async with server.mcp("legacy", path="/mcp/hooks") as client:
        result = await client.call_tool(tool, arguments)
    return bool(result.is_error), text_of(result), dict(result.structured_content or {})


def plugin(base: Path, name: str, config: Any, *, nested: bool = False) -> Path:
    path = base / name / ("hooks/han-config.json" if nested else "han-config.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(config if isinstance(config, str) else json.dumps(config))
    return path
