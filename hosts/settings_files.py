"""The agent hosts' settings files, written without disturbing anything else in them: one writer for every host.

The hosts rewrite these files themselves, often, and people edit them by hand. So every write is atomic (a
temporary file beside it, then a rename: a crash never leaves half a file), keeps the file's mode and its layout
(indentation, final newline), refuses a file it cannot read rather than guess, and takes out exactly what
Hook Bridge wrote: a register then an unregister gives a file back byte for byte, and a file that held only
what we wrote goes with it.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hosts.base import SetupError

# A file that cannot be read as it must be (not JSON, not an object where one belongs): refused, untouched.
ConfigError = SetupError


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
    """A temporary file beside it, then a rename, keeping the file's mode: never half a file. Its folder is made
    if it is missing (a host's settings folder before the host's first run)."""
    path.parent.mkdir(parents=True, exist_ok=True)
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


def add_hooks(
    data: dict[str, Any],
    events: Sequence[str],
    entry: dict[str, Any],
    matcher: str = "*",
    *,
    ours: Callable[[Any], bool],
    tool_events: Sequence[str] = (),
) -> list[str]:
    """Add `entry` under each event (once: a second run adds nothing); returns the events it was added to.

    `ours` tells a hook already added; `tool_events` get `matcher`.
    """
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError("'hooks' in the settings is not an object; refusing to touch it")
    added = []
    for event in events:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"'hooks.{event}' in the settings is not a list; refusing to touch it")
        if any(ours(hook) for group in groups if isinstance(group, dict) for hook in group.get("hooks", [])):
            continue
        group: dict[str, Any] = {"matcher": matcher} if event in tool_events else {}
        group["hooks"] = [entry]
        groups.append(group)
        added.append(event)
    return added


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


def save_or_remove(path: Path, data: dict[str, Any]) -> None:
    """Save `data`, or remove the file if nothing is left in it: a file register made goes with unregister."""
    if data:
        save(path, data)
    elif path.exists():
        path.unlink()


def object_in(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    """`data[key]` as an object (made if missing); refused if the file holds something else there."""
    found = data.setdefault(key, {})
    if not isinstance(found, dict):
        raise ConfigError(f"'{key}' in {path} is not an object; refusing to touch it")
    return found


def remove_entry(data: dict[str, Any], key: str, name: str) -> bool:
    """Remove `data[key][name]`, and `data[key]` if that leaves it empty; False if it was not there."""
    entries = data.get(key)
    if not isinstance(entries, dict) or name not in entries:
        return False
    del entries[name]
    if not entries:
        del data[key]
    return True


def add_handlers(data: dict[str, Any], events: Sequence[str], handler: dict[str, Any], path: Path) -> None:
    """In a `hooks` object of flat handler lists (event → [handler, …]), `handler` after each event's own."""
    hooks = object_in(data, "hooks", path)
    for event in events:
        handlers = hooks.setdefault(event, [])
        if not isinstance(handlers, list):
            raise ConfigError(f"'hooks.{event}' in {path} is not a list; refusing to touch it")
        handlers.append(handler)


def remove_handlers(data: dict[str, Any], ours: Callable[[Any], bool]) -> list[str]:
    """In a `hooks` object of flat handler lists (event → [handler, …]), remove the handlers `ours` tells, and
    the lists and object that leaves empty; the events they were under."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    removed = []
    for event in list(hooks):
        handlers = hooks[event]
        if isinstance(handlers, list) and any(ours(handler) for handler in handlers):
            removed.append(event)
            kept = [handler for handler in handlers if not ours(handler)]
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks:
        del data["hooks"]
    return removed


def removed_words(events: list[str], server: bool, where: Path) -> str:
    """What unregister took out of `where`: "Removed hooks (a, b), the MCP server from …"."""
    said = [f"hooks ({', '.join(events)})"] if events else []
    return f"Removed {', '.join([*said, *(['the MCP server'] if server else [])])} from {where}."


def write_script(path: Path, mark: str, command: str) -> None:
    """An executable shell script that runs `command`, marked as ours on its second line (`is_script_of`)."""
    write_atomically(path, f"#!/bin/sh\n{mark}\nexec {command}\n")
    os.chmod(path, 0o755)


def is_script_of(path: Path, mark: str) -> bool:
    """Whether `path` is a script `write_script` wrote with `mark` (a person's own file never is)."""
    try:
        return path.is_file() and mark in path.read_text().splitlines()[:2]
    except (OSError, UnicodeDecodeError):
        return False
