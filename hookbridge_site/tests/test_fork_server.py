"""The tests' fork server (testing/forkserver.py) runs a management command as a started process would."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.forkserver import ForkServer
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
