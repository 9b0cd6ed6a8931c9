"""Daphne workers for the tests, forked from one interpreter that has imported the libraries they all import.

A test worker starts dozens of daphne processes in a run, and each spent 1.3 of its 1.5 CPU-seconds importing the
MCP SDK's types, pydantic, Django and Twisted before it served anything: on two cores, a minute and a half of a
fresh clone's CI run (2026-11-28). Here one process per test worker imports them once (`PRELOAD`, none of which
reads Django's settings or installs Twisted's reactor), and each server is a fork of it that takes its own
environment, folder and log, then runs `python -m daphne …` as the command line would (`runpy`, `__main__`): the
same daphne, settings and site, read after the fork. Coverage follows the fork (`patch = ["fork"]`).

Management commands the harness runs against a server's database (`testing.live`'s `manage`) are forks too
(`ForkServer.run`, `python manage.py …` through `runpy`): each such process spent most of its CPU on the same
imports before its few milliseconds of work.

Only the tests use it (`conftest.py` sets `testing.live.fork_server`); the benchmarks time and weigh real starts,
and the tests of the commands (`serve`, the installed `hookbridge`, stdio) start real processes.

Protocol, one line each: the harness writes a JSON request {"module" or "path", "args", "env", "cwd", "stdout",
"stderr"}; the fork server answers "started PID" and, whenever a child ends, "exit PID CODE" (CODE as subprocess
gives it: negative for a signal).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import runpy
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO

# What every server imports first and the most of its start (`python -X importtime`), safe before the settings.
PRELOAD = (
    "mcp.server.mcpserver",
    "mcp.server.streamable_http",
    "mcp_types",
    "pydantic",
    "starlette.applications",
    "sse_starlette",
    "django.db.models",
    "django.http",
    "django.urls",
    "django.forms",
    "django.template",
    "django.core.serializers.json",
    "twisted.internet.asyncioreactor",
    "twisted.internet.tcp",
    "twisted.web.http",
    "autobahn.twisted.websocket",
    "markdown_it",
    "nh3",
    "slack_sdk.web",
    "cryptography.x509",
    "prometheus_client",
)


def _say(line: str) -> None:
    # One write() of a short line to a pipe is atomic: the SIGCHLD handler may say "exit" between two answers.
    os.write(1, (line + "\n").encode())


def _reap(signum: int, frame: object) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _say(f"exit {pid} {os.waitstatus_to_exitcode(status)}")


def _become(request: Mapping[str, object]) -> None:
    """In the fork: the process `python -m MODULE ARGS` (or `python PATH ARGS`) started with ENV in CWD, its
    output to STDOUT and STDERR, would be."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update(env)
    cwd = str(request["cwd"])
    os.chdir(cwd)
    sys.path[0] = cwd
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        out = os.open(str(request[name]), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(out, fd)
        os.close(out)
    args = request["args"]
    assert isinstance(args, list)
    if "path" in request:
        sys.argv = [str(request["path"]), *map(str, args)]
        runpy.run_path(str(request["path"]), run_name="__main__")
    else:
        module = str(request["module"])
        sys.argv = [module, *map(str, args)]
        runpy.run_module(module, run_name="__main__", alter_sys=True)


def main() -> None:
    if "DJANGO_SETTINGS_MODULE" in os.environ:
        raise SystemExit("the fork server must start without DJANGO_SETTINGS_MODULE: each server reads its own")
    for name in PRELOAD:
        importlib.import_module(name)
    # Each fork's daphne installs Twisted's asyncio reactor as it imports: one installed here would be the
    # default reactor, shared by every fork.
    if "twisted.internet.reactor" in sys.modules:
        raise SystemExit("a preloaded module installed Twisted's reactor")
    signal.signal(signal.SIGCHLD, _reap)
    # What was imported goes to the collector's permanent generation, never walked again: each fork's
    # collections otherwise went through every preloaded object, writing to each page and so copying it
    # (measured here, 2026-11-29: a daphne fork 2.0 → 0.84 CPU-seconds, `manage.py check` 2.2 → 0.9, against 4.0
    # and 1.8 started cold; the same lines covered).
    gc.freeze()
    _say("ready")
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        # A fork's "started" is said before its "exit", however soon it ends: the exit is reaped (and said) only
        # once SIGCHLD is let through again.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        pid = os.fork()
        if pid == 0:
            _become(request)
            # As an interpreter ends: SystemExit unwinds this loop, then threads are joined and atexit runs
            # (coverage saves there).
            raise SystemExit(0)
        _say(f"started {pid}")
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})


class Forked:
    """A forked server or command, as much of `subprocess.Popen` as the harness uses."""

    def __init__(self, server: ForkServer, pid: int, name: str, generation: int = 1) -> None:
        self.server = server
        self.pid = pid
        self.generation = generation
        self.returncode: int | None = None
        self.args = [name]

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.exit_code(self.pid, self.generation)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        code = self.server.wait_exit(self.pid, self.generation, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.returncode = code
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkServer:
    """The fork server of one test worker, started at its first request."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._changed = threading.Condition()
        # A pid is used again once its process is reaped (32,768 of them, and a run starts more processes than
        # that): each fork is its pid and how many forks had it before, so an old fork's exit is never taken for
        # a new one's (a forked `manage.py shell` was once "done" at once with no output, another's exit code).
        self._generation: dict[int, int] = {}
        self._started: list[tuple[int, int]] = []
        self._exits: dict[tuple[int, int], int] = {}

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
            self._process = subprocess.Popen(
                [sys.executable, "-m", "testing.forkserver"],
                cwd=Path(__file__).resolve().parent.parent,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            assert self._process.stdout is not None
            ready = self._process.stdout.readline()
            if ready != b"ready\n":
                raise RuntimeError(f"the fork server did not start: {ready!r}")
            threading.Thread(target=self._read, args=(self._process.stdout,), daemon=True).start()
        return self._process

    def _read(self, out: IO[bytes]) -> None:
        for line in out:
            word, *rest = line.decode().split()
            with self._changed:
                pid = int(rest[0])
                if word == "started":
                    self._generation[pid] = self._generation.get(pid, 0) + 1
                    self._started.append((pid, self._generation[pid]))
                elif word == "exit":
                    self._exits[pid, self._generation.get(pid, 0)] = int(rest[1])
                self._changed.notify_all()

    def coverage_matches(self, env: Mapping[str, str]) -> bool:
        """Whether a server with `env` is measured exactly as this fork server's forks are: they start from this
        worker's environment, read here rather than kept (before the first start nothing was kept: every
        measured server then took the slow path and the fork server never started)."""
        mine = {key: value for key, value in os.environ.items() if key.startswith("COVERAGE_")}
        return mine == {key: value for key, value in env.items() if key.startswith("COVERAGE_")}

    def launch(self, module: str, args: list[str], *, env: Mapping[str, str], cwd: Path, log: Path) -> Forked:
        """`python -m MODULE ARGS`, its output and errors both to LOG (a server)."""
        return self._fork("module", module, args, env=env, cwd=cwd, out=log, err=log)

    def run(self, path: str, args: list[str], *, env: Mapping[str, str], cwd: Path, out: Path, err: Path) -> Forked:
        """`python PATH ARGS` (a management command), its output to OUT and its errors to ERR."""
        return self._fork("path", path, args, env=env, cwd=cwd, out=out, err=err)

    def _fork(
        self, kind: str, name: str, args: list[str], *, env: Mapping[str, str], cwd: Path, out: Path, err: Path
    ) -> Forked:
        request = {kind: name, "args": args, "env": dict(env), "cwd": str(cwd), "stdout": str(out), "stderr": str(err)}
        with self._lock:
            process = self._start()
            assert process.stdin is not None
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
            with self._changed:
                if not self._changed.wait_for(lambda: bool(self._started), timeout=30):
                    raise RuntimeError("the fork server did not fork")
                pid, generation = self._started.pop(0)
                return Forked(self, pid, name, generation)

    def exit_code(self, pid: int, generation: int) -> int | None:
        with self._changed:
            return self._exits.get((pid, generation))

    def wait_exit(self, pid: int, generation: int, timeout: float | None) -> int | None:
        with self._changed:
            self._changed.wait_for(lambda: (pid, generation) in self._exits, timeout=timeout)
            return self._exits.get((pid, generation))

    def close(self) -> None:
        if self._process is not None:
            assert self._process.stdin is not None
            self._process.stdin.close()  # its loop ends; the forks it still has are the harness's to stop
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None


if __name__ == "__main__":
    main()
