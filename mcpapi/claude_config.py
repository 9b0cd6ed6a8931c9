"""Reading and writing Claude Code's ~/.claude.json without disturbing anything else in it.

Claude Code rewrites this file itself, often. So every write is atomic (a temporary file
beside it, then a rename: a crash never leaves half a file), keeps the file's mode and its
layout (indentation, final newline), and a registration made for the life of a server
(serve --register, stdio --register) is undone by removing exactly its own entry.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


class ConfigError(Exception):
    pass


def default_path() -> Path:
    return Path.home() / ".claude.json"


def load(path: Path) -> dict[str, Any]:
    return parse(path, path.read_text() if path.exists() else None)


def parse(path: Path, text: str | None) -> dict[str, Any]:
    """The config `path` holds as `text` (None: no file yet)."""
    try:
        data = json.loads(text or "{}")
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); refusing to touch it") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; refusing to touch it")
    return data


def dumps_like(original: str | None, data: dict[str, Any]) -> str:
    """`data` as JSON laid out like `original` (indentation, spacing, final newline); 2 spaces for a new file."""
    if original is None:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    found = re.search(r"[{\[][ \t]*\n([ \t]+)\S", original)
    if found:
        whitespace = found.group(1)
        text = json.dumps(data, indent=len(whitespace) if set(whitespace) == {" "} else whitespace, ensure_ascii=False)
    elif '": ' in original or ", " in original:
        text = json.dumps(data, ensure_ascii=False)
    else:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text + ("\n" if original.endswith("\n") else "")


def write_atomically(path: Path, text: str) -> None:
    """A temporary file beside it, then a rename, keeping the file's mode: never half a file."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name.lstrip('.')}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def save(path: Path, data: dict[str, Any]) -> None:
    original = path.read_text() if path.exists() else None
    write_atomically(path, dumps_like(original, data))


def add_server(data: dict[str, Any], project: str, name: str, entry: dict[str, Any]) -> None:
    projects = data.setdefault("projects", {})
    if not isinstance(projects, dict):
        raise ConfigError("'projects' in the config is not an object; refusing to touch it")
    servers = projects.setdefault(project, {}).setdefault("mcpServers", {})
    servers[name] = entry


def remove_server(data: dict[str, Any], project: str, name: str) -> bool:
    """Remove exactly that entry, and the containers it leaves empty; False if it was not there."""
    projects = data.get("projects", {})
    servers = projects.get(project, {}).get("mcpServers", {})
    if name not in servers:
        return False
    del servers[name]
    if not servers:
        del projects[project]["mcpServers"]
    if not projects[project]:
        del projects[project]
    if not projects:
        del data["projects"]
    return True


@dataclass(frozen=True)
class Registration:
    """An entry written for the life of a process, and what the file held before."""

    path: Path
    project: str
    name: str
    before: str | None  # None: there was no file
    written: str


def register(path: Path, project: str, name: str, entry: dict[str, Any]) -> Registration:
    before = path.read_text() if path.exists() else None
    data = parse(path, before)
    add_server(data, project, name, entry)
    written = dumps_like(before, data)
    write_atomically(path, written)
    return Registration(path, project, name, before, written)


def register_here(name: str, entry: dict[str, Any]) -> Registration:
    """Register `entry` in ~/.claude.json for the project in the current folder (--register)."""
    project = str(Path.cwd().resolve())
    registration = register(default_path(), project, name, entry)
    logger.info("Registered '%s' for %s in %s", name, project, registration.path)
    return registration


def unregister(registration: Registration) -> bool:
    """Remove exactly the entry `registration` wrote; False if it is gone already.

    If nobody wrote the file since, it gets back exactly what it held before, byte for byte;
    otherwise (Claude Code saved it meanwhile) only the entry is taken out of what is there now.
    """
    path = registration.path
    current = path.read_text() if path.exists() else None
    if current == registration.written:
        if registration.before is None:
            path.unlink()
        else:
            write_atomically(path, registration.before)
        return True
    if current is None:
        return False
    data = parse(path, current)
    if not remove_server(data, registration.project, registration.name):
        return False
    write_atomically(path, dumps_like(current, data))
    return True


def unregister_quietly(registration: Registration) -> None:
    """On the way out of a process: a failure to remove the entry is logged, never raised over the shutdown."""
    try:
        removed = unregister(registration)
    except (OSError, ConfigError):
        logger.warning("Could not remove '%s' from %s", registration.name, registration.path, exc_info=True)
        return
    if removed:
        logger.info("Removed '%s' from %s", registration.name, registration.path)
