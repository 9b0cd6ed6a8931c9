"""daphne, with every call into Hook Bridge's own code noted in order: what a real request runs, for the test
that holds docs/architecture.md's walks to the code (tests/e2e/test_architecture_walk.py).

`python -m testing.traced <daphne's arguments>`, with HOOKBRIDGE_TRACE_FILE naming the file each call is
written to as `module.qualname`, one a line. Only the apps' own modules are noted (not their tests or
migrations), and only functions: a module's or a class's body running is an import. A coroutine resumed is
noted again, as the profiler sees it.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import tomllib
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
APPS = frozenset(
    package
    for package in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]
    if package not in ("tests", "bench", "testing")
)


def main() -> None:
    out = open(os.environ["HOOKBRIDGE_TRACE_FILE"], "a", buffering=1)  # noqa: SIM115 - open for the process's life
    lock = threading.Lock()

    def noted(frame: FrameType, event: str, arg: Any) -> None:
        # Functions only: a module's or a class's body running is an import, not a call.
        if event != "call" or not frame.f_code.co_flags & inspect.CO_NEWLOCALS:
            return
        module = frame.f_globals.get("__name__", "")
        if module.partition(".")[0] in APPS and ".tests" not in module and ".migrations" not in module:
            with lock:
                out.write(f"{module}.{frame.f_code.co_qualname}\n")

    threading.setprofile(noted)
    sys.setprofile(noted)
    from daphne.cli import CommandLineInterface

    sys.argv = ["daphne", *sys.argv[1:]]
    CommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
