"""Where a hook may run, which folders it runs in, its environment, output capture and the process group."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from core.errors import Refused
from hooks.config import Hook
from hooks.runner import (
    Capture,
    Lines,
    hook_env,
    marker_directories,
    resolve_target,
    run_command,
    run_directories,
)
from testing.live import process_alive


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    for folder in ("app", "libs/one", "libs/two", "node_modules/dep", ".git/x", "docs"):
        (root / folder).mkdir(parents=True)
    for folder in ("app", "libs/one", "libs/two", "node_modules/dep", ".git/x"):
        (root / folder / "package.json").write_text("{}")
    (root / "libs" / "two" / "proj.csproj").write_text("")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "package.json").write_text("{}")
    (root / "link-out").symlink_to(tmp_path / "outside")
    (root / "libs" / "link-in").symlink_to(root / "app")
    return root.resolve()


def test_the_target_defaults_to_the_workspace(workspace: Path) -> None:
    assert resolve_target(workspace, ".").relative == "."
    assert resolve_target(workspace, "").path == workspace
    assert resolve_target(workspace, "libs/one").relative == "libs/one"
    assert resolve_target(workspace, str(workspace / "app")).relative == "app"  # absolute, but inside
    assert resolve_target(workspace, "libs/../app").relative == "app"


@pytest.mark.parametrize("directory", ["..", "../..", "/", "/etc", "link-out", "libs/../../outside", "app/../.."])
def test_a_folder_outside_the_workspace_is_refused(workspace: Path, directory: str) -> None:
    with pytest.raises(Refused, match="is outside the workspace"):
        resolve_target(workspace, directory)


@pytest.mark.parametrize("directory", ["missing", "app/package.json", "$(id)", "a\x00b"])
def test_a_path_that_is_not_a_folder_is_refused(workspace: Path, directory: str) -> None:
    with pytest.raises(Refused):
        resolve_target(workspace, directory)


def test_markers_are_found_below_the_target_but_not_in_dependencies_hidden_or_linked_folders(workspace: Path) -> None:
    found = marker_directories(workspace, ("package.json",))
    assert [p.relative_to(workspace).as_posix() for p in found] == ["app", "libs/one", "libs/two"]
    assert [p.name for p in marker_directories(workspace, ("*.csproj",))] == ["two"]
    assert marker_directories(workspace / "docs", ("package.json",)) == []


def test_the_environment_has_the_plugin_root_and_none_of_the_servers_settings(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_KEY", "s3cret")
    monkeypatch.setenv("DATABASE_URL", "postgres://user:pw@db/x")
    monkeypatch.setenv("HOOKBRIDGE_WEBHOOK_URL", "https://hooks.example/x")
    monkeypatch.setenv("NODE_OPTIONS", "--max-old-space-size=4096")
    hook = Hook(
        plugin="p",
        name="h",
        plugin_root=Path("/plugins/p"),
        config_path=Path("/plugins/p/han-config.json"),
        command="true",
    )
    env = hook_env(hook, workspace)
    assert env["CLAUDE_PLUGIN_ROOT"] == "/plugins/p"
    assert env["CLAUDE_PROJECT_DIR"] == str(workspace)
    assert env["NODE_OPTIONS"] == "--max-old-space-size=4096"  # the toolchain's own settings pass
    assert not {"SECRET_KEY", "DATABASE_URL", "HOOKBRIDGE_WEBHOOK_URL"} & set(env)


def test_capture_keeps_everything_under_the_limit() -> None:
    capture = Capture(100)
    for chunk in (b"abc", b"def" * 10):
        capture.feed(chunk)
    assert (capture.text(), capture.cut) == ("abc" + "def" * 10, 0)


def test_capture_keeps_the_start_and_the_end_and_counts_the_cut() -> None:
    capture = Capture(10)
    capture.feed(b"0123456789")
    capture.feed(b"abcdefghij")
    assert capture.total == 20
    assert capture.cut == 10
    assert capture.text().startswith("01234\n[… 10 bytes cut here")
    assert capture.text().endswith("\nfghij")


async def test_a_command_runs_in_its_folder_with_stderr_captured(workspace: Path) -> None:
    result = await run_command(
        "pwd; echo oops >&2; exit 4", cwd=workspace / "app", env=dict(os.environ), timeout=10, output_limit=1024
    )
    assert result.exit_code == 4
    assert not result.ok
    assert not result.timed_out
    assert result.output == f"{workspace / 'app'}\noops\n"


async def test_the_timeout_kills_children_that_ignore_sigterm(tmp_path: Path) -> None:
    command = f"sh -c 'trap \"\" TERM; sleep 300' & echo $! > {tmp_path}/pid; wait"
    started = time.monotonic()
    result = await run_command(command, cwd=tmp_path, env=dict(os.environ), timeout=1, output_limit=1024)
    assert result.timed_out
    assert result.exit_code is None
    assert time.monotonic() - started < 60, "the 300 s sleep was killed at its timeout"
    pid = int((tmp_path / "pid").read_text())
    for _ in range(100):
        if not process_alive(pid):
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("a child that ignored SIGTERM survived the timeout")


async def test_a_background_process_does_not_outlive_a_finished_command(tmp_path: Path) -> None:
    command = f"sleep 300 > /dev/null 2>&1 & echo $! > {tmp_path}/pid; echo done"
    result = await run_command(command, cwd=tmp_path, env=dict(os.environ), timeout=10, output_limit=1024)
    assert result.ok
    assert result.output == "done\n"
    pid = int((tmp_path / "pid").read_text())
    await asyncio.sleep(0.2)
    assert not process_alive(pid)


async def test_dir_test_keeps_only_the_folders_where_it_succeeds(workspace: Path) -> None:
    (workspace / "libs" / "one" / "package.json").write_text('{"devDependencies": {"jest": "1"}}')
    hook = Hook(
        plugin="jutsu-jest", name="test", plugin_root=workspace, config_path=workspace / "han-config.json",
        command="npm test", dirs_with=("package.json",), dir_test="grep -q jest package.json",
    )  # fmt: skip
    target = resolve_target(workspace, ".")
    folders = await run_directories(hook, target, dict(os.environ))
    assert [p.relative_to(workspace).as_posix() for p in folders] == ["libs/one"]
    without_test = Hook(**{**hook.__dict__, "dir_test": None})
    assert len(await run_directories(without_test, target, dict(os.environ))) == 3
    no_markers = Hook(**{**hook.__dict__, "dirs_with": (), "dir_test": None})
    assert await run_directories(no_markers, resolve_target(workspace, "docs"), {}) == [workspace / "docs"]


def test_lines_come_whole_however_the_output_is_split() -> None:
    lines = Lines()
    assert lines.feed(b"fir") == []
    assert lines.feed(b"st\r\nsec") == ["first"]
    assert lines.feed("ond é".encode()[:-1]) == []  # half of a two-byte character
    assert lines.feed("é".encode()[-1:] + b"\nthird\n\n") == ["second é", "third", ""]
    assert lines.feed(b"no newline at the end") == []
    assert lines.end() == ["no newline at the end"]
    assert lines.end() == []


def test_a_line_over_the_limit_is_cut_and_its_rest_dropped() -> None:
    lines = Lines(max_bytes=5)
    assert lines.feed(b"abcdefgh") == ["abcde [line cut]"]
    assert lines.feed(b"ijk") == []
    assert lines.feed(b"lmn\nok\n") == ["ok"]
    assert lines.feed(b"0123456789") == ["01234 [line cut]"]
    assert lines.end() == []


async def test_each_line_is_handed_on_while_the_command_still_runs(tmp_path: Path) -> None:
    go = tmp_path / "go"
    heard: list[str] = []
    seen_before_go: list[str] = []

    async def on_line(line: str) -> None:
        heard.append(line)
        if line == "first":
            seen_before_go.extend(heard)
            go.write_text("")  # the command waits for this: "first" came while it ran

    command = f"echo first; while [ ! -e {go} ]; do sleep 0.02; done; printf 'second\\nlast'"
    result = await run_command(
        command, cwd=tmp_path, env=dict(os.environ), timeout=10, output_limit=1024, on_line=on_line
    )
    assert result.ok
    assert seen_before_go == ["first"]
    assert heard == ["first", "second", "last"]
    assert result.output == "first\nsecond\nlast"


async def test_a_failing_listener_stops_hearing_but_the_command_finishes(tmp_path: Path) -> None:
    calls = 0

    async def on_line(line: str) -> None:
        nonlocal calls
        calls += 1
        raise ConnectionError("the client went away")

    # 200 kB through a 64 kB pipe: a reader that stopped draining would hang the command.
    command = "head -c 200000 /dev/zero | tr '\\0' 'x' | fold -w 100; echo done"
    result = await run_command(
        command, cwd=tmp_path, env=dict(os.environ), timeout=10, output_limit=1024, on_line=on_line
    )
    assert result.ok
    assert calls == 1
    assert result.output_bytes == 200000 + 1999 + len("done\n")  # fold adds no newline at the end


@pytest.mark.parametrize("directory", ["x" * 300, "app/" + "é" * 200])
def test_a_directory_the_file_system_refuses_is_refused_naming_directory(workspace: Path, directory: str) -> None:
    with pytest.raises(Refused, match=r"^directory: .* cannot be used: File name too long"):
        resolve_target(workspace, directory)


def test_a_loop_of_links_is_refused_naming_directory(workspace: Path) -> None:
    # Python 3.11 raises while resolving the loop, 3.13 resolves it to a path that is no folder: refused either way.
    (workspace / "loop").symlink_to(workspace / "loop")
    with pytest.raises(Refused, match=r"^directory: 'loop' (cannot be used: |is not a folder)"):
        resolve_target(workspace, "loop")
