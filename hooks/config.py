"""Finding hooks: each plugin folder's han-config.json, checked, and what each hook becomes as a tool."""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from hookbridge_site import runtime

logger = logging.getLogger(__name__)

CONFIG_LOCATIONS = ("han-config.json", "hooks/han-config.json")
# Plugin and hook names become tool names, which MCP limits to these characters.
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
# han groups its plugins by a leading category word; a title reads better without it.
CATEGORY_PREFIXES = ("jutsu", "do", "hashi", "buki", "han")
# Markers are matched against the names in one folder, so a path is never one.
MARKER = re.compile(r"^[^/\\\x00]+$")


class AnnotationsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: StrictStr | None = Field(default=None, min_length=1, max_length=200)
    readOnlyHint: StrictBool | None = None
    destructiveHint: StrictBool | None = None
    idempotentHint: StrictBool | None = None
    openWorldHint: StrictBool | None = None


class HookConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: StrictStr = Field(min_length=1)
    dirsWith: list[StrictStr] = Field(default_factory=list)
    dirTest: StrictStr | None = Field(default=None, min_length=1)
    description: StrictStr | None = Field(default=None, min_length=1, max_length=2000)
    triggers: list[StrictStr] = Field(default_factory=list)
    annotations: AnnotationsConfig = Field(default_factory=AnnotationsConfig)
    # Hook Bridge's own: seconds before the run's process group is killed, and runs at once.
    timeout: float | None = Field(default=None, gt=0, le=24 * 3600, strict=True)
    maxConcurrent: StrictInt = Field(default=1, ge=1, le=100)
    # han's own keys, accepted so its configs load unchanged; Hook Bridge runs every time.
    ifChanged: list[StrictStr] = Field(default_factory=list)
    idleTimeout: StrictInt | StrictBool | None = None


class HanConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hooks: dict[str, HookConfig]


@dataclass(frozen=True)
class Hook:
    """One hook of one plugin, as the tool it is served as."""

    plugin: str
    name: str
    plugin_root: Path
    config_path: Path
    command: str
    dirs_with: tuple[str, ...] = ()
    dir_test: str | None = None
    description: str | None = None
    triggers: tuple[str, ...] = ()
    timeout: float = 600.0
    max_concurrent: int = 1
    annotations: ToolAnnotations = field(default_factory=ToolAnnotations)

    @property
    def tool_name(self) -> str:
        return tool_name(self.plugin, self.name)

    @property
    def title(self) -> str:
        return self.annotations.title or derived_title(self.plugin, self.name)

    def tool_description(self) -> str:
        """What the agent reads: what the hook does, when to use it, where it runs, and what it runs."""
        lines = [self.description or f"Runs the {self.name} hook of the {self.plugin} plugin."]
        if self.triggers:
            lines.append("Triggers: " + ", ".join(json.dumps(t, ensure_ascii=False) for t in self.triggers) + ".")
        if self.dirs_with:
            where = f"Runs in directories containing: {', '.join(self.dirs_with)}."
            if self.dir_test:
                where += f" Only those where this check succeeds: {self.dir_test}"
            lines.append(where)
        else:
            lines.append("Runs in the workspace folder, or in the directory you give.")
        lines.append(f"Command: {self.command}")
        return "\n".join(lines)


def tool_name(plugin: str, hook: str) -> str:
    return f"{plugin}_{hook}".replace("-", "_")


def derived_title(plugin: str, hook: str) -> str:
    """('jutsu-typescript', 'lint') -> 'Lint Typescript'."""
    plugin_words = re.split(r"[-_]+", plugin)
    if len(plugin_words) > 1 and plugin_words[0].lower() in CATEGORY_PREFIXES:
        plugin_words = plugin_words[1:]
    words = [*re.split(r"[-_]+", hook), *plugin_words]
    return " ".join(word.capitalize() for word in words if word)


@dataclass
class Discovery:
    """What a plugins folder held: the hooks that load, and why the others did not."""

    plugins_dir: Path | None
    hooks: dict[str, Hook] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def _config_path(plugin_root: Path) -> Path | None:
    for location in CONFIG_LOCATIONS:
        candidate = plugin_root / location
        if candidate.is_file():
            return candidate
    return None


def _problems(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        message = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def _load_plugin(plugin_root: Path, config_path: Path, default_timeout: float) -> list[Hook]:
    """The plugin's hooks; raises ValueError with the problem when its config is not valid."""
    plugin = plugin_root.name
    if not NAME.match(plugin):
        raise ValueError(f"plugin folder name {plugin!r} may hold only letters, digits, '-' and '_'")
    try:
        raw = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"is not valid JSON: {exc}") from None
    try:
        config = HanConfig.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(_problems(exc)) from None
    hooks = []
    for name, hook in config.hooks.items():
        if not NAME.match(name):
            raise ValueError(f"hooks.{name}: a hook name may hold only letters, digits, '-' and '_'")
        bad_markers = [marker for marker in hook.dirsWith if not MARKER.match(marker) or marker in (".", "..")]
        if bad_markers:
            raise ValueError(f"hooks.{name}.dirsWith: {bad_markers[0]!r} is not a file name (no paths)")
        notes = hook.annotations
        hooks.append(
            Hook(
                plugin=plugin,
                name=name,
                plugin_root=plugin_root,
                config_path=config_path,
                command=hook.command,
                dirs_with=tuple(hook.dirsWith),
                dir_test=hook.dirTest,
                description=hook.description,
                triggers=tuple(hook.triggers),
                timeout=hook.timeout or default_timeout,
                max_concurrent=hook.maxConcurrent,
                annotations=ToolAnnotations(
                    title=notes.title or derived_title(plugin, name),
                    read_only_hint=bool(notes.readOnlyHint),
                    destructive_hint=bool(notes.destructiveHint),
                    idempotent_hint=True if notes.idempotentHint is None else notes.idempotentHint,
                    open_world_hint=bool(notes.openWorldHint),
                ),
            )
        )
    return hooks


def discover(plugins_dir: Path | None, *, reserved: Iterable[str] = (), default_timeout: float = 600.0) -> Discovery:
    """Load every plugin under plugins_dir; a plugin whose config is invalid is skipped and reported."""
    found = Discovery(plugins_dir)
    if plugins_dir is None:
        return found
    reserved = set(reserved)
    for plugin_root in sorted(p for p in plugins_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        config_path = _config_path(plugin_root)
        if config_path is None:
            continue  # a plugin without checks (skills, commands only)
        try:
            hooks = _load_plugin(plugin_root, config_path, default_timeout)
            clashes = [hook.tool_name for hook in hooks if hook.tool_name in reserved or hook.tool_name in found.hooks]
            if clashes:
                raise ValueError(f"tool name {clashes[0]!r} is already taken by another tool")
        except ValueError as exc:
            message = f"{config_path}: {exc}"
            logger.error("Skipped plugin %s: %s", plugin_root.name, message)
            found.errors.append(message)
            continue
        found.hooks.update((hook.tool_name, hook) for hook in hooks)
    return found


@functools.cache
def discovered() -> Discovery:
    """The hooks this process serves: discovery runs once, at the first use.

    A hook may not take the name of one of the MCP server's own tools (runtime.reserved_tool_names).
    """
    result = discover(
        settings.HOOKBRIDGE_PLUGINS_DIR,
        reserved=runtime.reserved_tool_names,
        default_timeout=settings.HOOKBRIDGE_HOOK_TIMEOUT,
    )
    logger.info("Hooks: %d loaded, %d plugin configs skipped", len(result.hooks), len(result.errors))
    return result
