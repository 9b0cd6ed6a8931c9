"""An agent host's terminal UI driven as a person drives it: in a tmux session of its own, read off the screen."""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any


class Terminal:
    """`command` in a tmux session of its own, 160 columns by 48 lines, started in `folder` with exactly `env`."""

    def __init__(self, folder: Path, env: dict[str, str], *command: str) -> None:
        self.name = f"hookbridge-{uuid.uuid4().hex[:8]}"
        exports = [f"{key}={value}" for key, value in env.items()]
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", self.name, "-x", "160", "-y", "48", "-c", str(folder),
             "env", "-i", *exports, *command],
            check=True,
        )  # fmt: skip

    def screen(self) -> str:
        shown = subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True)
        return shown.stdout

    async def type(self, text: str) -> None:
        """Type `text` at the prompt and, once the prompt shows it (keys sent while the UI still starts are
        lost on a loaded machine), press Enter."""
        self.keys("-l", text)
        await until("the prompt showing what was typed", lambda: text in self.screen(), 30, self.screen)
        self.keys("Enter")

    async def choose(self, prompt: str, *keys: str) -> None:
        """Answer the dialog that shows `prompt` with `keys`, again until it goes: keys pressed as it first draws
        are lost, as typed text is."""
        deadline = time.monotonic() + 30
        while prompt in self.screen():
            shown = self.screen()
            assert time.monotonic() < deadline, f"{prompt!r} still asks after 30 s; the terminal shows:\n{shown}"
            self.keys(*keys)
            await until(f"{prompt!r} going", lambda: prompt not in self.screen(), 2, self.screen, fail=False)

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


async def until(
    what: str, found: Callable[[], Any], timeout: float, screen: Callable[[], str], *, fail: bool = True
) -> Any:
    """`found()`'s first truthy value within `timeout` seconds; else an error saying `what` did not happen and
    what the terminal shows (`fail=False`: None)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := found():
            return value
        await asyncio.sleep(0.25)
    if not fail:
        return None
    raise AssertionError(f"{what} did not happen within {timeout} s; the terminal shows:\n{screen()}")
