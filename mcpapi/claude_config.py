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
from collections.abc import Callable, Sequence
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


# --- Claude Code's hooks, in a settings.json (register_claude --hooks) ---------------------------

HOOK_EVENTS = (
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "SessionEnd",
    "Notification",
)
# Events whose matcher names tools; the others take none.
TOOL_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse")


def settings_path(project: Path, where: str) -> Path:
    """The settings file: local (.claude/settings.local.json, not committed), project, or user."""
    if where == "user":
        return Path.home() / ".claude" / "settings.json"
    name = "settings.local.json" if where == "local" else "settings.json"
    return project / ".claude" / name


def hook_entry(url: str, token_env: str, timeout: int) -> dict[str, Any]:
    """One HTTP hook: the token comes from the environment, never from the file."""
    return {
        "type": "http",
        "url": url,
        "timeout": timeout,
        "headers": {"Authorization": f"Bearer ${token_env}"},
        "allowedEnvVars": [token_env],
    }


def add_hooks(
    data: dict[str, Any],
    events: Sequence[str],
    entry: dict[str, Any],
    matcher: str = "*",
    *,
    ours: Callable[[Any], bool] | None = None,
    tool_events: Sequence[str] = TOOL_EVENTS,
) -> list[str]:
    """Add `entry` under each event (once: a second run adds nothing); returns the events it was added to.

    `ours` tells a hook already added (default: an HTTP hook to the entry's URL); `tool_events` get `matcher`.
    """
    is_ours = ours or (lambda hook: _ours(hook, entry["url"]))
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError("'hooks' in the settings is not an object; refusing to touch it")
    added = []
    for event in events:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"'hooks.{event}' in the settings is not a list; refusing to touch it")
        if any(is_ours(hook) for group in groups if isinstance(group, dict) for hook in group.get("hooks", [])):
            continue
        group: dict[str, Any] = {"matcher": matcher} if event in tool_events else {}
        group["hooks"] = [entry]
        groups.append(group)
        added.append(event)
    return added


def _ours(hook: Any, url: str) -> bool:
    return isinstance(hook, dict) and hook.get("type") == "http" and hook.get("url") == url


def approving_url(url: str) -> str:
    """The hooks' URL for a PreToolUse that waits for the team's decision (`register_claude --approve`)."""
    return f"{url}?approve=1"


def add_approving_hook(data: dict[str, Any], entry: dict[str, Any], tools: str) -> bool:
    """A PreToolUse hook to the approving URL for the tools `tools` matches (once); whether it was added.

    Claude Code asks nobody for what its own rules or its auto mode allow, so no PermissionRequest comes; a
    PreToolUse to /hooks/claude?approve=1 waits for a person whatever the mode.
    """
    approving = {**entry, "url": approving_url(entry["url"])}
    added = add_hooks(data, ["PreToolUse"], approving, tools, ours=lambda hook: _ours(hook, approving["url"]))
    return bool(added)


def remove_hooks(data: dict[str, Any], url: str) -> list[str]:
    """Remove every HTTP hook to `url` (its approving URL too), and the groups, lists and object that leaves
    empty; returns the events."""
    return remove_hooks_where(data, lambda hook: _ours(hook, url) or _ours(hook, approving_url(url)))


def remove_hooks_where(data: dict[str, Any], ours: Callable[[Any], bool]) -> list[str]:
    """Remove every hook `ours` tells, and the groups, lists and object that leaves empty; returns the events."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    removed = []
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                kept = [hook for hook in group["hooks"] if not ours(hook)]
                if len(kept) != len(group["hooks"]):
                    removed.append(event)
                    if not kept:
                        continue
                    group = {**group, "hooks": kept}
            kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del data["hooks"]
    return removed
