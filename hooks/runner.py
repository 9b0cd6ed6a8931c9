"""Running a hook's command: where it may run, in which directories, and the process group around it.

The command is the config's, run by /bin/sh in a folder of the workspace; nothing
a tool call sends ever becomes part of it. A tool argument only picks the folder,
and that folder is checked to be inside the workspace after symlinks are followed.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from core.errors import Refused
from hooks.config import Hook

logger = logging.getLogger(__name__)

# Folders never searched for markers: tool caches and dependencies, not the team's projects.
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "venv", "target", "dist", "build"})
# Server settings a hook's command has no business reading (a test suite is code an agent may have written).
SERVER_ENV_PREFIXES = ("HOOKBRIDGE_", "DJANGO_")
SERVER_ENV_NAMES = frozenset({"SECRET_KEY", "DATABASE_URL", "REDIS_URL"})
# How long a process group gets to exit on SIGTERM before SIGKILL.
TERMINATE_GRACE = 2.0


@dataclass(frozen=True)
class Target:
    path: Path  # resolved
    relative: str  # to the workspace, "." for the workspace itself


def resolve_target(workspace: Path, directory: str) -> Target:
    """The folder a run is narrowed to; refuses anything that is not a folder inside the workspace."""
    if "\x00" in directory:
        raise Refused("directory: must not contain a NUL character", field="directory")
    raw = directory.strip() or "."
    joined = Path(raw) if Path(raw).is_absolute() else workspace / raw
    try:
        # resolve() follows symlinks: a link inside the workspace pointing out is refused here.
        resolved = joined.resolve()
        if not resolved.is_relative_to(workspace):
            raise Refused(
                f"directory: {directory!r} is outside the workspace; give a folder inside it, such as '.'",
                field="directory",
            )
        if not resolved.is_dir():
            raise Refused(f"directory: {directory!r} is not a folder in the workspace", field="directory")
    except (OSError, RuntimeError) as exc:
        # A name part over the file system's limit, a loop of links (RuntimeError before Python 3.13), a folder
        # we may not read: the caller's input, not our fault.
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise Refused(f"directory: {directory!r} cannot be used: {reason}", field="directory") from None
    return Target(resolved, resolved.relative_to(workspace).as_posix() or ".")


def marker_directories(target: Path, markers: tuple[str, ...]) -> list[Path]:
    """Folders under target (itself included) holding one of the markers, in a stable order.

    Symlinked folders are not entered and hidden folders, dependencies and build output
    are skipped, so the search stays inside the workspace and inside the team's code.
    """
    found = []
    for folder, subfolders, files in os.walk(target, followlinks=False):
        names = files + subfolders
        if any(fnmatch.filter(names, marker) for marker in markers):
            found.append(Path(folder))
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in SKIPPED_FOLDERS)
    return sorted(found)


def hook_env(hook: Hook, workspace: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(SERVER_ENV_PREFIXES) and key not in SERVER_ENV_NAMES
    }
    env["CLAUDE_PLUGIN_ROOT"] = str(hook.plugin_root)
    env["CLAUDE_PROJECT_DIR"] = str(workspace)
    return env


class Capture:
    """Output up to a limit: the start and the end are kept, the middle is cut and counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - (self.limit - self.limit // 2)
            if excess > 0:
                del self.tail[:excess]

    @property
    def cut(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        if not self.cut:
            return (self.head + self.tail).decode("utf-8", errors="replace")
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        note = f"[… {self.cut} bytes cut here: Hook Bridge keeps {self.limit} bytes of output per directory …]"
        return f"{head}\n{note}\n{tail}"

    async def drain(self, stream: asyncio.StreamReader, on_line: OnLine | None = None) -> None:
        lines = Lines() if on_line is not None else None
        while chunk := await stream.read(65536):
            self.feed(chunk)
            if lines is not None:
                on_line = await _tell(on_line, lines.feed(chunk))
        if lines is not None:
            await _tell(on_line, lines.end())


# Called with each whole line of output while a command runs (for a caller watching live).
OnLine = Callable[[str], Awaitable[None]]


async def _tell(on_line: OnLine | None, lines: list[str]) -> OnLine | None:
    """Hand lines on; None from then on if the listener fails, since the pipe must still be drained."""
    for line in lines:
        if on_line is None:
            break
        try:
            await on_line(line)
        except Exception:
            logger.warning("Live output stopped: its listener failed", exc_info=True)
            return None
    return on_line


class Lines:
    """Output cut into whole lines, as it arrives; a line longer than the limit is cut, its rest dropped.

    Bytes are split before decoding, so a character split between two reads stays whole.
    """

    def __init__(self, max_bytes: int = 1000) -> None:
        self.max_bytes = max_bytes
        self.partial = bytearray()
        self.cutting = False  # inside a line already cut: its rest is dropped up to its end

    def feed(self, chunk: bytes) -> list[str]:
        out = []
        *complete, rest = chunk.split(b"\n")
        for piece in complete:
            if not self.cutting:
                out.append(self._decode(self.partial + piece))
            self.partial.clear()
            self.cutting = False
        if not self.cutting:
            self.partial += rest
            if len(self.partial) > self.max_bytes:
                out.append(self._decode(self.partial[: self.max_bytes]) + " [line cut]")
                self.partial.clear()
                self.cutting = True
        return out

    def end(self) -> list[str]:
        """The last line, when the output did not end with a newline."""
        last = [] if self.cutting or not self.partial else [self._decode(self.partial)]
        self.partial.clear()
        return last

    def _decode(self, line: bytes | bytearray) -> str:
        return bytes(line).rstrip(b"\r").decode("utf-8", errors="replace")


@dataclass
class CommandResult:
    exit_code: int | None  # None: killed at the timeout
    timed_out: bool
    output: str
    output_bytes: int
    output_cut: int
    duration: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Signal the whole group; False when nothing is left in it."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def _terminate_group(pgid: int, grace: float = TERMINATE_GRACE) -> None:
    """SIGTERM the group, then SIGKILL whatever is still there after the grace period."""
    if not _signal_group(pgid, signal.SIGTERM):
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        if not _group_has_live_members(pgid):
            return
    _signal_group(pgid, signal.SIGKILL)


def _group_has_live_members(pgid: int) -> bool:
    """Members that still run; zombies (dead, not yet reaped by init) do not count."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its ")".
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


Heartbeat = Callable[[float], Awaitable[None]]


async def run_command(
    command: str,
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    output_limit: int,
    heartbeat: Heartbeat | None = None,
    heartbeat_interval: float = 30.0,
    on_line: OnLine | None = None,
) -> CommandResult:
    """Run command with /bin/sh in its own process group; nothing it starts outlives the run.

    On timeout the group is terminated; a cancelled call (the client went away)
    terminates it too before the cancellation goes on. With on_line, each line of
    output is handed on as it is written.
    """
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        "/bin/sh",
        "-c",
        command,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,  # its own session and process group, led by the shell
    )
    pgid = process.pid
    capture = Capture(output_limit)
    assert process.stdout is not None
    reader = asyncio.create_task(capture.drain(process.stdout, on_line))
    timed_out = False
    try:
        while True:
            elapsed = time.monotonic() - started
            if elapsed >= timeout:
                timed_out = True
                logger.warning("Hook command timed out after %.0f s in %s: %s", timeout, cwd, command)
                break
            try:
                await asyncio.wait_for(asyncio.shield(process.wait()), min(heartbeat_interval, timeout - elapsed))
                break
            except TimeoutError:
                if heartbeat is not None and time.monotonic() - started < timeout:
                    await heartbeat(time.monotonic() - started)
    except BaseException:
        # Cancelled (the client disconnected, the server stops): the group must not outlive the
        # call. No await here: a cancelled scope would interrupt it, so the SIGKILL is scheduled.
        _signal_group(pgid, signal.SIGTERM)
        asyncio.get_running_loop().call_later(TERMINATE_GRACE, _signal_group, pgid, signal.SIGKILL)
        reader.cancel()
        raise
    if timed_out:
        await _terminate_group(pgid)
    else:
        # The shell is done; anything it left running in the background goes with it.
        _signal_group(pgid, signal.SIGKILL)
    try:
        await asyncio.wait_for(reader, 5)
    except TimeoutError:  # a process that left the group still holds the pipe
        reader.cancel()
    exit_code = await process.wait()
    return CommandResult(
        exit_code=None if timed_out else exit_code,
        timed_out=timed_out,
        output=capture.text(),
        output_bytes=capture.total,
        output_cut=capture.cut,
        duration=time.monotonic() - started,
    )


async def passes_dir_test(hook: Hook, folder: Path, env: dict[str, str]) -> bool:
    assert hook.dir_test is not None
    result = await run_command(hook.dir_test, cwd=folder, env=env, timeout=hook.timeout, output_limit=1024)
    return result.ok


async def run_directories(hook: Hook, target: Target, env: dict[str, str]) -> list[Path]:
    """Where the hook runs: every marker folder under the target that passes dirTest, or the target."""
    if not hook.dirs_with:
        return [target.path]
    candidates = await asyncio.to_thread(marker_directories, target.path, hook.dirs_with)
    if hook.dir_test is None:
        return candidates
    return [folder for folder in candidates if await passes_dir_test(hook, folder, env)]
