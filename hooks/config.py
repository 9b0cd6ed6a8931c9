"""Finding hooks: each plugin folder's han-config.json, checked, and what each hook becomes as a tool."""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from hooks import runtime as hooks_state

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
    # Every hint decided (the config's, else the defaults); mcpapi serves them as the MCP tool's annotations.
    annotations: AnnotationsConfig = field(default_factory=AnnotationsConfig)

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
    # Loaded all the same: keys of a config that Hook Bridge does not know, each left out.
    warnings: list[str] = field(default_factory=list)


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


def _drop_unknown_keys(raw: Any, model: type[BaseModel], where: str = "") -> list[str]:
    """Remove the keys `model` (and the models inside it) does not know from `raw`; their dotted paths."""
    if not isinstance(raw, dict):
        return []
    dropped = []
    for key in list(raw):
        path = f"{where}.{key}" if where else str(key)
        field_info = model.model_fields.get(key)
        if field_info is None:
            del raw[key]
            dropped.append(path)
            continue
        inner = field_info.annotation
        if inner is HookConfig or inner is AnnotationsConfig:
            dropped += _drop_unknown_keys(raw[key], inner, path)
        elif model is HanConfig and key == "hooks" and isinstance(raw[key], dict):
            for name, hook in raw[key].items():
                dropped += _drop_unknown_keys(hook, HookConfig, f"{path}.{name}")
    return dropped


def _load_plugin(
    plugin_root: Path,
    config_path: Path,
    default_timeout: float,
    warnings: list[str] | None = None,
    *,
    name: str | None = None,
) -> list[Hook]:
    """The plugin's hooks; raises ValueError with the problem when its config is not valid.

    Keys it does not know are left out, each noted in `warnings`.
    """
    warnings = [] if warnings is None else warnings
    plugin = name or plugin_root.name
    if not NAME.match(plugin):
        raise ValueError(f"plugin folder name {plugin!r} may hold only letters, digits, '-' and '_'")
    try:
        raw = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"is not valid JSON: {exc}") from None
    for unknown in _drop_unknown_keys(raw, HanConfig):
        # han's configs grow keys of their own over time: one Hook Bridge does not know is not a broken plugin.
        warnings.append(f"{config_path}: {unknown}: unknown key, ignored")
        logger.warning("Plugin %s: %s: unknown key in %s, ignored", plugin, unknown, config_path.name)
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
                annotations=AnnotationsConfig(
                    title=notes.title or derived_title(plugin, name),
                    readOnlyHint=bool(notes.readOnlyHint),
                    destructiveHint=bool(notes.destructiveHint),
                    idempotentHint=True if notes.idempotentHint is None else notes.idempotentHint,
                    openWorldHint=bool(notes.openWorldHint),
                ),
            )
        )
    return hooks


def discover(
    plugins_dir: Path | None,
    *,
    reserved: Iterable[str] = (),
    default_timeout: float = 600.0,
    more: Iterable[tuple[str, Path]] = (),
) -> Discovery:
    """Load every plugin under plugins_dir, then `more` ((name, folder) pairs: Claude Code's enabled plugins).

    A plugin whose config is invalid is skipped and reported; the first of two plugins of one name wins.
    """
    found = Discovery(plugins_dir)
    roots: list[tuple[str, Path]] = []
    if plugins_dir is not None:
        roots += [(p.name, p) for p in sorted(plugins_dir.iterdir()) if p.is_dir() and not p.name.startswith(".")]
    taken = {name for name, _ in roots}
    roots += [(name, root) for name, root in more if name not in taken]
    reserved = set(reserved)
    for name, plugin_root in roots:
        config_path = _config_path(plugin_root)
        if config_path is None:
            continue  # a plugin without checks (skills, commands only)
        try:
            hooks = _load_plugin(plugin_root, config_path, default_timeout, found.warnings, name=name)
            clashes = [hook.tool_name for hook in hooks if hook.tool_name in reserved or hook.tool_name in found.hooks]
            if clashes:
                raise ValueError(f"tool name {clashes[0]!r} is already taken by another tool")
        except ValueError as exc:
            message = f"{config_path}: {exc}"
            logger.error("Skipped plugin %s: %s", name, message)
            found.errors.append(message)
            continue
        found.hooks.update((hook.tool_name, hook) for hook in hooks)
    return found


def _json_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        logger.warning("Could not read %s for Claude Code's plugins: %s", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def claude_code_plugins(home: Path, project: Path | None = None) -> list[tuple[str, Path]]:
    """The plugins Claude Code has enabled, as han finds them: (name, folder) for each one on this disk.

    `enabledPlugins` ("name@marketplace": true) from the user's settings, then the project's and its
    local settings (a later file wins); each marketplace's folder from known_marketplaces.json (or a
    local `directory` source in `extraKnownMarketplaces`), and the plugin's folder from the
    marketplace's own .claude-plugin/marketplace.json, else from Claude Code's plugin cache.
    """
    files = [home / ".claude" / "settings.json"]
    if project is not None:
        files += [project / ".claude" / "settings.json", project / ".claude" / "settings.local.json"]
    enabled: dict[str, object] = {}
    marketplaces: dict[str, Path] = {}
    for path in files:
        config = _json_file(path)
        if isinstance(config.get("enabledPlugins"), dict):
            enabled.update(config["enabledPlugins"])
        for market, entry in (config.get("extraKnownMarketplaces") or {}).items():
            source = entry.get("source") if isinstance(entry, dict) else None
            if isinstance(source, dict) and source.get("source") == "directory" and isinstance(source.get("path"), str):
                marketplaces.setdefault(market, (path.parent.parent / source["path"]).resolve())
    plugins_root = home / ".claude" / "plugins"
    for market, entry in _json_file(plugins_root / "known_marketplaces.json").items():
        if isinstance(entry, dict) and isinstance(entry.get("installLocation"), str):
            marketplaces[market] = Path(entry["installLocation"])
    found = []
    for plugin_id, on in enabled.items():
        name, _, market = plugin_id.partition("@")
        if on is not True or not name or not market:
            continue
        root = _plugin_folder(name, marketplaces.get(market), plugins_root / "cache" / market / name)
        if root is None:
            logger.warning("Claude Code's plugin %s is enabled but not found on this disk", plugin_id)
            continue
        found.append((name, root))
    return found


def _plugin_folder(name: str, marketplace: Path | None, cache: Path) -> Path | None:
    if marketplace is not None:
        listing = _json_file(marketplace / ".claude-plugin" / "marketplace.json").get("plugins") or []
        for entry in listing:
            if isinstance(entry, dict) and entry.get("name") == name and isinstance(entry.get("source"), str):
                folder: Path = (marketplace / entry["source"]).resolve()
                if folder.is_dir():
                    return folder
    # A plugin from elsewhere (a repository, a package) is installed in the cache, one folder per version.
    versions = (
        sorted((p for p in cache.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime) if cache.is_dir() else []
    )
    return versions[-1] if versions else None


def reserve_tool_names(names: Callable[[], frozenset[str]]) -> None:
    """Tool names no hook may take (the MCP server's own), handed in at start-up before any discovery.

    A function, called at the first discovery: the names come from the tool sets, which load the MCP SDK,
    and a process that never serves hooks (a `manage.py` command) need not load it.
    """
    hooks_state.reserved_tool_names = names
    discovered.cache_clear()


@functools.cache
def discovered() -> Discovery:
    """The hooks this process serves: discovery runs once, at the first use.

    A hook may not take the name of one of the MCP server's own tools (reserve_tool_names).
    """
    more = claude_code_plugins(Path.home(), settings.HOOKBRIDGE_WORKSPACE) if settings.HOOKBRIDGE_CLAUDE_PLUGINS else []
    result = discover(
        settings.HOOKBRIDGE_PLUGINS_DIR,
        reserved=hooks_state.reserved_tool_names(),
        default_timeout=settings.HOOKBRIDGE_HOOK_TIMEOUT,
        more=more,
    )
    logger.info("Hooks: %d loaded, %d plugin configs skipped", len(result.hooks), len(result.errors))
    return result
