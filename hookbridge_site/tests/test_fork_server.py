"""The tests' fork server (testing/forkserver.py) runs a management command as a started process would."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

import pytest

from testing.forkserver import Forked, ForkServer
from testing.live import ROOT, forked_manage, migrated_template


@pytest.fixture(scope="module")
def fork_server() -> Iterator[ForkServer]:
    server = ForkServer()
    yield server
    server.close()


@pytest.mark.parametrize(
    "args",
    [["check"], ["showmigrations", "tokens"], ["no_such_command"], ["create_token"]],
    ids=["check", "output", "unknown-command", "missing-argument"],
)
def test_a_forked_command_answers_as_a_started_one(fork_server: ForkServer, tmp_path: Path, args: list[str]) -> None:
    database = tmp_path / "db.sqlite3"
    database.write_bytes(migrated_template(ROOT, dict(os.environ)).read_bytes())
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "DJANGO_SETTINGS_MODULE": "testing.settings"}

    started = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    forked = forked_manage(fork_server, env, args, ROOT)

    assert forked == (started.returncode, started.stdout, started.stderr)


def test_a_forked_command_is_a_process_of_its_own(fork_server: ForkServer, tmp_path: Path) -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "testing.settings", "HOOKBRIDGE_MARK": "the fork's own"}
    script = "import os; print(os.getpid(), os.getcwd(), os.environ['HOOKBRIDGE_MARK'])"

    code, out, err = forked_manage(fork_server, env, ["shell", "-v", "0", "-c", script], ROOT)
    again = forked_manage(fork_server, env, ["shell", "-v", "0", "-c", script], ROOT)

    pid, cwd, mark = out.split(maxsplit=2)
    assert (code, err, cwd, mark.strip()) == (0, "", str(ROOT), "the fork's own")
    assert int(pid) not in (os.getpid(), int(again[1].split()[0]))
    assert "HOOKBRIDGE_MARK" not in os.environ


def test_a_pid_used_again_is_a_new_fork_not_the_old_ones_exit() -> None:
    # The kernel gives a pid again once its process is reaped; a run starts more processes than there are pids.
    server = ForkServer()
    server._read(BytesIO(b"started 4242\nexit 4242 0\n"))
    old = Forked(server, 4242, "manage.py", 1)
    server._read(BytesIO(b"started 4242\n"))
    new = Forked(server, 4242, "manage.py", 2)
    assert old.poll() == 0
    assert new.poll() is None, "the new fork with the old one's pid is still running"
    with pytest.raises(subprocess.TimeoutExpired):
        new.wait(timeout=0.01)
    server._read(BytesIO(b"exit 4242 3\n"))
    assert (old.poll(), new.wait(timeout=1)) == (0, 3)


def test_a_fork_that_ends_at_once_is_said_started_before_its_exit(fork_server: ForkServer, tmp_path: Path) -> None:
    # No cwd: the fork fails as it starts. Its exit must still be its own, never lost before "started" came.
    process = fork_server.run(
        "manage.py", ["check"], env=dict(os.environ), cwd=tmp_path / "gone", out=tmp_path / "o", err=tmp_path / "e"
    )
    assert process.wait(timeout=30) != 0
