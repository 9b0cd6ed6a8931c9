"""Where Hook Bridge keeps its data, known without Django: the settings and `hookbridge hook` (which reads the
local login's token from there) both ask here."""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """HOOKBRIDGE_DATA_DIR; else a checkout's var/ beside the code; else an installed package's (pip, pipx, uv
    tool) user data folder, never inside site-packages."""
    if said := os.environ.get("HOOKBRIDGE_DATA_DIR", "").strip():
        return Path(said).expanduser()
    if (BASE_DIR / "pyproject.toml").exists():
        return BASE_DIR / "var"
    return Path(os.environ.get("XDG_DATA_HOME", "").strip() or Path.home() / ".local" / "share") / "hookbridge"


def local_credentials() -> Path:
    """The local login and agent token `serve` made on first run (mcpapi's bootstrap_local)."""
    return data_dir() / "local-credentials.json"
