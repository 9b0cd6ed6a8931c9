"""Reading and writing Claude Code's ~/.claude.json without disturbing anything else in it."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


class ConfigError(Exception):
    pass


def default_path() -> Path:
    return Path.home() / ".claude.json"


def load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text() or "{}")
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); refusing to touch it") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; refusing to touch it")
    return data


def save(path: Path, data: dict[str, Any]) -> None:
    """Write atomically: a temporary file beside it, then a rename, keeping the file's mode."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as file:
            json.dump(data, file, indent=2, ensure_ascii=False)
            file.write("\n")
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


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
