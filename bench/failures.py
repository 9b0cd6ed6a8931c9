"""Why a benchmark failed, said in one line: the root errors of whatever wrapped them (exception groups from task
groups nested deeper than Python prints, causes), each with where it was raised, after the whole traceback."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from pathlib import Path


def roots(exc: BaseException) -> list[BaseException]:
    """The errors at the bottom: each group's leaves, each leaf followed down its explicit cause."""
    if isinstance(exc, BaseExceptionGroup):
        return [root for inner in exc.exceptions for root in roots(inner)]
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return [exc]


def one_line(exc: BaseException) -> str:
    """`Type: message (file:line in function)`, where it was raised."""
    said = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        said += f" ({Path(last.filename).name}:{last.lineno} in {last.name})"
    return " ".join(said.split())


def summary(exc: BaseException, most: int = 3) -> str:
    found = roots(exc)
    distinct = list(dict.fromkeys(one_line(root) for root in found))
    more = f"; and {len(distinct) - most} more" if len(distinct) > most else ""
    return f"{len(found)} error{'s' if len(found) != 1 else ''}: " + "; ".join(distinct[:most]) + more


def reporting(name: str, main: Callable[[], object]) -> None:
    """Run a benchmark's main; on a failure, the traceback, then `NAME failed: <root errors>` last, exit 1."""
    try:
        main()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        traceback.print_exception(exc, file=sys.stderr)
        print(f"{name} failed: {summary(exc)}", file=sys.stderr, flush=True)
        sys.exit(1)
