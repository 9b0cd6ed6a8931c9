"""Running one hook for a caller: claim a slot, find the folders, run the command in each, record it all.

The MCP tool set (mcpapi.toolsets.hooks) only turns a tool call into `run_hook` and
its `Outcome` into a tool result; progress and cancellation come in as callbacks,
so nothing here knows about MCP.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from django.conf import settings

from core import presence
from core.db import database_sync_to_async
from core.errors import Refused
from core.formatting import duration
from hooks import runner
from hooks.config import Hook
from hooks.models import AtCapacity, Busy, DirectoryStatus, HookRun, HookRunDirectory, RunStatus
from tokens.models import AgentToken

logger = logging.getLogger(__name__)

# Reports progress: (a value that grows, a message).
ProgressReport = Callable[[float, str], Awaitable[None]]
# Sends a line of a verbose run's output to a caller without a progress token (as a log message).
LineReport = Callable[[str], Awaitable[None]]
# Opens the scope in which a client's cancellation of this call stops the run.
CancelScope = Callable[[], AbstractAsyncContextManager[Any]]


# A verbose run streams at most this many lines of output live; all of it that is kept is in the result.
LIVE_LINES = 200


@dataclass(frozen=True)
class Outcome:
    run: HookRun
    steps: list[HookRunDirectory]
    text: str  # what the agent reads
    payload: dict[str, Any]  # the same, structured

    @property
    def failed(self) -> bool:
        return self.run.status in (RunStatus.FAILED, RunStatus.TIMED_OUT, RunStatus.CANCELLED)


def workspace() -> Path:
    folder = settings.HOOKBRIDGE_WORKSPACE
    assert folder is not None  # it defaults to the working directory
    return Path(folder)


def _steps_of(run: HookRun) -> list[HookRunDirectory]:
    return list(run.directories.all())


def _relative(folder: Path) -> str:
    return folder.relative_to(workspace()).as_posix() or "."


def _overall(steps: list[HookRunDirectory]) -> RunStatus:
    statuses = {step.status for step in steps}
    if not steps:
        return RunStatus.NOTHING_TO_RUN
    if DirectoryStatus.FAILED in statuses:
        return RunStatus.FAILED
    if DirectoryStatus.TIMED_OUT in statuses:
        return RunStatus.TIMED_OUT
    return RunStatus.PASSED


def result_text(hook: Hook, run: HookRun, steps: list[HookRunDirectory], markers: tuple[str, ...]) -> str:
    """The per-directory summary an agent reads, then the output that matters."""
    if not steps:
        where = f"contains {', '.join(markers)}" if markers else "qualifies"
        return f"Nothing to run: no directory under {run.target!r} {where}. {hook.tool_name} ran nowhere."
    ran = [s for s in steps if s.status not in (DirectoryStatus.SKIPPED, DirectoryStatus.CANCELLED)]
    bad = [s for s in ran if s.status in (DirectoryStatus.FAILED, DirectoryStatus.TIMED_OUT)]
    if run.status == RunStatus.CANCELLED:
        head = f"✖ {hook.title} ({hook.tool_name}) was cancelled; its processes were stopped."
    elif bad:
        head = f"❌ {hook.title} ({hook.tool_name}) failed in {len(bad)} of {len(ran)} directories run"
        skipped = len(steps) - len(ran)
        head += f"; failFast left {skipped} more not run." if skipped else "."
    else:
        head = f"✅ {hook.title} ({hook.tool_name}) passed in {len(ran)} of {len(ran)} directories."
    lines = [head, ""]
    for step in steps:
        if step.status == DirectoryStatus.TIMED_OUT:
            detail = f"timed out after {hook.timeout:g} s, processes killed"
        elif step.exit_code is not None:
            took = "-" if step.duration_seconds is None else duration(step.duration_seconds, tenths=True)
            detail = f"exit {step.exit_code} in {took}"
        else:
            detail = step.get_status_display().lower()
        lines.append(f"{step.symbol} {step.directory}: {detail}")
    shown = ran if run.verbose else bad
    for step in shown:
        lines += [
            "",
            f"--- {step.directory} ({step.get_status_display().lower()}) ---",
            step.output.rstrip() or "(no output)",
        ]
        if step.output_cut:
            lines.append(
                f"[output cut: {step.output_cut} of {step.output_bytes} bytes left out; "
                f"the limit is {settings.HOOKBRIDGE_HOOK_OUTPUT_LIMIT} bytes per directory]"
            )
    if not run.verbose and len(shown) < len(ran):
        lines += ["", "Output of passing directories is left out; call again with verbose=true to see it."]
    lines += ["", f"Run {run.pk}: {presence.public_url()}{run.get_absolute_url()}"]
    return "\n".join(lines)


def payload(run: HookRun, steps: list[HookRunDirectory]) -> dict[str, Any]:
    return {
        "runId": str(run.pk),
        "status": str(run.status),
        "directories": [
            {
                "directory": s.directory,
                "status": s.status,
                "exitCode": s.exit_code,
                "durationSeconds": s.duration_seconds,
            }
            for s in steps
        ],
    }


class Progress:
    """Progress for a caller that asked for it; the value is seconds since the run began.

    MCP wants each notification's value to grow; the folder count goes in the message,
    since a heartbeat while one folder runs would repeat it.
    """

    def __init__(self, report: ProgressReport | None) -> None:
        self._report = report
        self.started = time.monotonic()
        self.last = -1.0

    async def report(self, message: str) -> None:
        if self._report is None:
            return
        self.last = max(time.monotonic() - self.started, self.last + 0.001)
        await self._report(round(self.last, 3), message)

    @property
    def wanted(self) -> bool:
        return self._report is not None


class LiveOutput:
    """A verbose run's output, line by line while it runs: as progress if the caller asked for progress,
    else as log messages; bounded, so a chatty command cannot flood the caller."""

    def __init__(self, progress: Progress, log: LineReport | None) -> None:
        self.progress = progress
        self.log = log
        self.sent = 0

    def for_directory(self, directory: str) -> runner.OnLine:
        async def on_line(line: str) -> None:
            if self.sent > LIVE_LINES:
                return
            self.sent += 1
            if self.sent > LIVE_LINES:
                text = f"[{directory}] … more output is not sent live (limit {LIVE_LINES} lines); the result has it"
            else:
                text = f"[{directory}] {line}"
            if self.progress.wanted:
                await self.progress.report(text)
            elif self.log is not None:
                await self.log(text)

        return on_line


async def run_hook(
    hook: Hook,
    *,
    caller: AgentToken | None,
    caller_name: str,
    verbose: bool,
    fail_fast: bool,
    directory: str,
    progress: ProgressReport | None = None,
    log: LineReport | None = None,
    cancel_scope: CancelScope | None = None,
) -> Outcome:
    """Run `hook` under `directory` of the workspace; raises Refused when it may not start.

    A verbose run hands each line of output on while it runs: to `progress` when given, else to `log`.
    """
    try:
        target = runner.resolve_target(workspace(), directory)
    except Refused as exc:
        logger.warning("Refused %s for %s: %s", hook.tool_name, caller_name, exc)
        raise
    try:
        run = await database_sync_to_async(HookRun.start)(
            tool=hook.tool_name, plugin=hook.plugin, hook=hook.name, title=hook.title, command=hook.command,
            target=target.relative, max_concurrent=hook.max_concurrent, timeout_seconds=hook.timeout,
            caller=caller, caller_name=caller_name, fail_fast=fail_fast, verbose=verbose,
        )  # fmt: skip
    except (Busy, AtCapacity) as exc:
        raise Refused(str(exc), 409) from None
    logger.info("Hook %s started in %s for %s (run %s)", hook.tool_name, target.relative, caller_name, run.pk)
    reporter = Progress(progress)
    listening = progress is not None or log is not None
    live = LiveOutput(reporter, log) if verbose and listening else None
    env = runner.hook_env(hook, workspace())
    steps: list[HookRunDirectory] = []
    status = RunStatus.CANCELLED
    async with cancel_scope() if cancel_scope is not None else nullcontext():
        try:
            folders = await runner.run_directories(hook, target, env)
            steps = await database_sync_to_async(run.plan)([_relative(folder) for folder in folders])
            for index, (step, folder) in enumerate(zip(steps, folders, strict=True)):
                done = f"{index} of {len(steps)} folders done"
                await _run_one(hook, run, step, folder, env, progress=reporter, live=live, done=done)
                if fail_fast and step.status != DirectoryStatus.PASSED:
                    break
            status = _overall([s for s in steps if s.status != DirectoryStatus.WAITING])
        finally:
            # Cancelled or not, the run is closed and its slot freed; shielded, or a cancelled scope stops it.
            with anyio.CancelScope(shield=True):
                await database_sync_to_async(run.finish)(status)
                steps = await database_sync_to_async(_steps_of)(run)
    logger.info("Hook %s in %s: %s (run %s)", hook.tool_name, target.relative, status, run.pk)
    return Outcome(run, steps, result_text(hook, run, steps, hook.dirs_with), payload(run, steps))


async def _run_one(
    hook: Hook,
    run: HookRun,
    step: HookRunDirectory,
    folder: Path,
    env: dict[str, str],
    *,
    progress: Progress,
    live: LiveOutput | None,
    done: str,
) -> None:
    await database_sync_to_async(run.directory_started)(step)
    await progress.report(f"{hook.tool_name}: {done}; running in {step.directory}")

    async def heartbeat(elapsed: float) -> None:
        await database_sync_to_async(run.beat)()
        await progress.report(f"{hook.tool_name}: {done}; running in {step.directory} for {int(elapsed)} s")

    try:
        result = await runner.run_command(
            hook.command,
            cwd=folder,
            env=env,
            timeout=hook.timeout,
            output_limit=settings.HOOKBRIDGE_HOOK_OUTPUT_LIMIT,
            heartbeat=heartbeat,
            heartbeat_interval=settings.HOOKBRIDGE_PROGRESS_INTERVAL,
            on_line=live.for_directory(step.directory) if live is not None else None,
        )
    except OSError as exc:  # the folder vanished, /bin/sh is missing
        logger.warning("Hook %s could not start in %s: %s", hook.tool_name, step.directory, exc)
        await database_sync_to_async(run.directory_finished)(
            step, status=DirectoryStatus.FAILED, output=f"Could not start the command: {exc}", duration_seconds=0.0
        )
        return
    if result.timed_out:
        status = DirectoryStatus.TIMED_OUT
    else:
        status = DirectoryStatus.PASSED if result.ok else DirectoryStatus.FAILED
    await database_sync_to_async(run.directory_finished)(
        step,
        status=status,
        exit_code=result.exit_code,
        duration_seconds=result.duration,
        output=result.output,
        output_bytes=result.output_bytes,
        output_cut=result.output_cut,
    )
