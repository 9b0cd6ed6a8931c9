"""A local server without SECRET_KEY keeps the key it runs on, so logins survive a restart; settings never write it."""

from __future__ import annotations

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
