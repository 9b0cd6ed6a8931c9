"""A local server without SECRET_KEY keeps the key it runs on, so logins survive a restart; settings never write it."""

from __future__ import annotations

import multiprocessing
import stat
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from core import local_secret


def test_it_saves_a_key_once_for_this_user_only(tmp_path: Path) -> None:
    path = tmp_path / "var" / "secret_key"
    assert local_secret.save(path, "first")
    assert not local_secret.save(path, "second"), "a key already saved is kept"
    assert local_secret.read(path) == "first"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_it_reads_nothing_where_no_key_was_saved(tmp_path: Path) -> None:
    assert local_secret.read(tmp_path / "secret_key") is None


@pytest.mark.django_db
def test_serve_keeps_the_key_this_process_runs_on(
    tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SECRET_KEY", raising=False)
    settings.HOOKBRIDGE_SECRET_KEY_FILE = tmp_path / "secret_key"
    call_command("bootstrap_local", credentials=str(tmp_path / "credentials.json"), stdout=StringIO())
    assert local_secret.read(tmp_path / "secret_key") == settings.SECRET_KEY


def _save_then_read(path: str) -> str | None:
    local_secret.save(Path(path), local_secret.generate())
    return local_secret.read(Path(path))


def test_processes_starting_at_once_all_read_the_one_key_saved_never_an_empty_file(tmp_path: Path) -> None:
    # A CI run's unit tier failed on this: one worker created the audit key's file, another read it empty
    # before the first had written, and took "" as the key.
    paths = [str(tmp_path / f"key{n}") for n in range(40)]
    with multiprocessing.get_context("fork").Pool(4) as pool:
        for path in paths:
            keys = pool.map(_save_then_read, [path] * 8)
            assert None not in keys, f"a process read {path} before its key was in it"
            assert len(set(keys)) == 1, "every process uses the one key saved"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(Path(p).name for p in paths), "no draft is left"
