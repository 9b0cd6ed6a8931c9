"""Which dashboard servers run on this machine's database, where, and whether anyone has a dashboard open.

A stdio process has no web server of its own: the dashboard a person answers on is a
`serve` process on the same database. To open the browser at a question only when
nobody watches, and at the address that server actually listens on, each server
writes one small file in the folder its processes already share
(core.local_layer.bus_folder): `<pid>.server`, holding its URL and how
many dashboards are open on it. Files of processes that are gone are ignored.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from core import runtime
from core.local_layer import bus_folder

logger = logging.getLogger(__name__)

SUFFIX = ".server"
# What HOOKBRIDGE_PUBLIC_URL is when nobody set it: then a process without a web server of its own
# (stdio, a management command) names the address the running `serve` took instead.
DEFAULT_PUBLIC_URL = "http://127.0.0.1:8000"


@dataclass(frozen=True)
class Server:
    pid: int
    url: str
    dashboards: int


def _folder() -> Path | None:
    return bus_folder(settings.DATABASES["default"])


def publish(dashboards: int) -> None:
    """Write this server's URL and how many dashboards are open on it (atomically: a reader never sees half a file)."""
    folder = _folder()
    if folder is None:
        return
    body = json.dumps({"url": settings.HOOKBRIDGE_PUBLIC_URL, "dashboards": dashboards})
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".presence-")
        with os.fdopen(fd, "w") as out:
            out.write(body)
        os.replace(temporary, folder / f"{os.getpid()}{SUFFIX}")
    except OSError:
        logger.warning("Could not note this server's dashboards in %s", folder, exc_info=True)


def withdraw() -> None:
    folder = _folder()
    if folder is not None:
        with contextlib.suppress(OSError):
            (folder / f"{os.getpid()}{SUFFIX}").unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def servers() -> list[Server]:
    """The other live servers on this database, newest file first."""
    folder = _folder()
    if folder is None or not folder.is_dir():
        return []
    found: list[tuple[float, Server]] = []
    for path in folder.glob(f"*{SUFFIX}"):
        try:
            pid = int(path.stem)
            if pid == os.getpid() or not _alive(pid):
                continue
            data = json.loads(path.read_text())
            found.append((path.stat().st_mtime, Server(pid, str(data["url"]), int(data["dashboards"]))))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return [server for _, server in sorted(found, key=lambda item: item[0], reverse=True)]


def public_url() -> str:
    """The dashboard's address as people reach it, for every link the server writes.

    HOOKBRIDGE_PUBLIC_URL when it is set (and in `serve`, which sets it to the address it bound);
    otherwise, in a process with no web server of its own (stdio, `register_claude`), the running
    `serve`'s address: `serve` takes the first free port from 8000 up, so :8000 was often wrong.
    """
    configured: str = settings.HOOKBRIDGE_PUBLIC_URL
    # A web server (a daphne worker) never reads the folder: it is its own address, and this runs on its loop.
    without_web_server = not runtime.serves_web
    if configured == DEFAULT_PUBLIC_URL and without_web_server and (running := servers()):
        return running[0].url
    return configured
