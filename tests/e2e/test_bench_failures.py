"""Issue 54: a benchmark that fails says why in one line, whatever wraps the error (bench.failures)."""

from __future__ import annotations

import pytest

from bench import failures


def nested(depth: int) -> BaseException:
    try:
        try:
            raise ConnectionResetError("the server went away")
        except ConnectionResetError as exc:
            raise RuntimeError("a held call failed") from exc
    except RuntimeError as exc:
        error: BaseException = exc
    for level in range(depth):
        error = BaseExceptionGroup(f"level {level}", [error, ValueError(f"sibling {level}")] if level == 0 else [error])
    return error


def test_the_root_error_of_a_group_nested_deeper_than_python_prints_is_said_in_one_line() -> None:
    said = failures.summary(nested(40))
    assert "\n" not in said
    assert said.startswith("2 errors: ConnectionResetError: the server went away (test_bench_failures.py:")
    assert "ValueError: sibling 0" in said


def test_a_failing_main_prints_the_root_error_last_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    def main() -> None:
        raise nested(3)

    with pytest.raises(SystemExit) as ended:
        failures.reporting("bench.example", main)
    assert ended.value.code == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("bench.example failed: 2 errors: ConnectionResetError: the server went away")
