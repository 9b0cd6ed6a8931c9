"""The secret key of a local server that was given none: generated once, kept beside the database.

Settings only read the file (hookbridge_site.settings); without one, the process
runs on a key of its own. `serve` (through bootstrap_local) saves the key it runs
on, so logins and signed session ids survive a restart, and `mcp_stdio` processes
started later on the same checkout use the same key.
"""

from __future__ import annotations

import logging
import os
import secrets
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)


def read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        return None


def generate() -> str:
    return secrets.token_urlsafe(50)


def save(path: Path, key: str) -> bool:
    """Keep `key` in `path` (readable by this user only) unless a key is there already; True if written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole under a name of its own, then linked into place: link() fails if the name exists, so two
    # processes starting at once cannot both write, and a reader never sees the file created but still empty
    # (an O_EXCL create and a write after it let another process read "" between the two).
    handle, draft = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w") as file:
            file.write(key)
        try:
            os.link(draft, path)
        except FileExistsError:
            return False
    finally:
        os.unlink(draft)
    logger.info("Saved the local secret key in %s", path)
    return True
