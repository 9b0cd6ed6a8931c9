"""Claude Code: its hooks are Hook Bridge's own dialect, POSTed by Claude Code itself (HTTP hooks).

Registered two ways: its MCP server in ~/.claude.json for a project (`register claude-code`; `serve --register`
and `stdio --register` for the life of a server), and its hooks in a settings file (`register claude-code
--hooks`: .claude/settings.local.json by default), HTTP hooks to /hooks/claude with the token from the
environment. Claude Code rewrites ~/.claude.json itself, often: a registration for the life of a process is
undone by removing exactly its own entry.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hosts import settings_files
from hosts.base import Host, Setup, SetupError, token_line

logger = logging.getLogger(__name__)


def default_path() -> Path:
    return Path.home() / ".claude.json"


def add_server(data: dict[str, Any], project: str, name: str, entry: dict[str, Any]) -> None:
    projects = data.setdefault("projects", {})
    if not isinstance(projects, dict):
        raise SetupError("'projects' in the config is not an object; refusing to touch it")
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


def register_entry(path: Path, project: str, name: str, entry: dict[str, Any]) -> Registration:
    before = path.read_text() if path.exists() else None
    data = settings_files.parse(path, before)
    add_server(data, project, name, entry)
    written = settings_files.dumps_like(before, data)
    settings_files.write_atomically(path, written)
    return Registration(path, project, name, before, written)


def register_here(name: str, entry: dict[str, Any]) -> Registration:
    """Register `entry` in ~/.claude.json for the project in the current folder (--register)."""
    project = str(Path.cwd().resolve())
    registration = register_entry(default_path(), project, name, entry)
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
            settings_files.write_atomically(path, registration.before)
        return True
    if current is None:
        return False
    data = settings_files.parse(path, current)
    if not remove_server(data, registration.project, registration.name):
        return False
    settings_files.write_atomically(path, settings_files.dumps_like(current, data))
    return True


def unregister_quietly(registration: Registration) -> None:
    """On the way out of a process: a failure to remove the entry is logged, never raised over the shutdown."""
    try:
        removed = unregister(registration)
    except (OSError, SetupError):
        logger.warning("Could not remove '%s' from %s", registration.name, registration.path, exc_info=True)
        return
    if removed:
        logger.info("Removed '%s' from %s", registration.name, registration.path)


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


def _ours(hook: Any, url: str) -> bool:
    return isinstance(hook, dict) and hook.get("type") == "http" and hook.get("url") == url


def approving_url(url: str) -> str:
    """The hooks' URL for a PreToolUse that waits for the team's decision (`register claude-code --hooks --approve`)."""
    return f"{url}?approve=1"


def add_approving_hook(data: dict[str, Any], entry: dict[str, Any], tools: str) -> bool:
    """A PreToolUse hook to the approving URL for the tools `tools` matches (once); whether it was added.

    Claude Code asks nobody for what its own rules or its auto mode allow, so no PermissionRequest comes; a
    PreToolUse to /hooks/claude?approve=1 waits for a person whatever the mode.
    """
    approving = {**entry, "url": approving_url(entry["url"])}
    added = settings_files.add_hooks(
        data, ["PreToolUse"], approving, tools, ours=lambda hook: _ours(hook, approving["url"]), tool_events=TOOL_EVENTS
    )
    return bool(added)


def remove_hooks(data: dict[str, Any], url: str) -> list[str]:
    """Remove every HTTP hook to `url` (its approving URL too), and the groups, lists and object that leaves
    empty; returns the events."""
    return settings_files.remove_hooks_where(data, lambda hook: _ours(hook, url) or _ours(hook, approving_url(url)))


class ClaudeCode(Host):
    """Claude Code's bodies and answers are the dialect itself: nothing is rewritten."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--config", default=None, help="the MCP servers' file (default: ~/.claude.json)")
        parser.add_argument("--print", action="store_true", help="print the .mcp.json entry and claude mcp add line")
        hooks = parser.add_argument_group("Claude Code's hooks (--hooks): approvals, live sessions, messages")
        hooks.add_argument(
            "--scope",
            choices=["local", "project", "user"],
            default="local",
            help="local: .claude/settings.local.json (default, not committed); project: .claude/settings.json; "
            "user: ~/.claude/settings.json",
        )
        hooks.add_argument("--settings-file", default=None, help="that settings file instead")
        hooks.add_argument(
            "--events", default=",".join(HOOK_EVENTS), help=f"the events to send (default: {','.join(HOOK_EVENTS)})"
        )
        hooks.add_argument("--token-env", default="HOOKBRIDGE_TOKEN", help="the variable the token is read from")

    def register(self, setup: Setup) -> list[str]:
        return register_hooks(setup) if setup.hooks else register_mcp(setup)

    def unregister(self, setup: Setup) -> list[str]:
        if setup.hooks:
            path, url = hooks_settings_path(setup), hooks_url(setup)
            data = settings_files.load(path)
            removed = remove_hooks(data, url)
            if not removed:
                raise SetupError(f"no hooks to {url} in {path}")
            settings_files.save(path, data)
            return [f"Removed the hooks to {url} ({', '.join(removed)}) from {path}."]
        project, path = project_of(setup), config_path(setup)
        data = settings_files.load(path)
        if not remove_server(data, project, setup.name):
            raise SetupError(f"no server '{setup.name}' is registered for {project} in {path}")
        settings_files.save(path, data)
        return [f"Removed '{setup.name}' for {project} from {path}. Restart Claude Code."]


CLAUDE_CODE = ClaudeCode(
    name="claude-code",
    title="Claude Code",
    path="/hooks/claude",
    registers="its MCP server in ~/.claude.json for a project; with --hooks, its HTTP hooks in a settings file",
)


def project_of(setup: Setup) -> str:
    """The project folder ~/.claude.json keys the entry by: --project, else here."""
    return str((setup.project or Path.cwd()).resolve())


def config_path(setup: Setup) -> Path:
    return Path(setup.options["config"]) if setup.options.get("config") else default_path()


def hooks_settings_path(setup: Setup) -> Path:
    if setup.options.get("settings_file"):
        return Path(setup.options["settings_file"])
    return settings_path(Path(project_of(setup)), setup.options.get("scope") or "local")


def hooks_url(setup: Setup) -> str:
    return f"{setup.url}{CLAUDE_CODE.path}"


def register_mcp(setup: Setup) -> list[str]:
    project, path = project_of(setup), config_path(setup)
    data = settings_files.load(path)
    token = setup.token(f"claude-code ({Path(project).name})", registered_token(data, project, setup.name))
    entry = {"type": "http", "url": setup.mcp_url, "headers": {"Authorization": f"Bearer {token}"}}
    if setup.options.get("print"):
        return [
            json.dumps({"mcpServers": {setup.name: entry}}, indent=2),
            f'claude mcp add --transport http {setup.name} {setup.mcp_url} --header "Authorization: Bearer {token}"',
        ]
    add_server(data, project, setup.name, entry)
    settings_files.save(path, data)
    return [
        f"Registered '{setup.name}' ({setup.mcp_url}) for {project} in {path}.",
        "Restart Claude Code to pick up the change.",
    ]


def register_hooks(setup: Setup) -> list[str]:
    options = setup.options
    events = [event.strip() for event in (options.get("events") or ",".join(HOOK_EVENTS)).split(",") if event.strip()]
    unknown = [event for event in events if event not in HOOK_EVENTS]
    if unknown or not events:
        known = ", ".join(HOOK_EVENTS)
        raise SetupError(f"--events: unknown event {', '.join(unknown) or '(none given)'}; known: {known}")
    token_env = options.get("token_env") or "HOOKBRIDGE_TOKEN"
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", token_env):
        raise SetupError(f"--token-env: {token_env!r} is not an environment variable name")
    approve = setup.approve.strip()
    if approve:
        try:
            re.compile(approve)
        except re.error as exc:
            raise SetupError(f"--approve: {approve!r} is not a regular expression ({exc})") from None
    path, url = hooks_settings_path(setup), hooks_url(setup)
    entry = hook_entry(url, token_env, setup.timeout or 600)
    data = settings_files.load(path)
    added = settings_files.add_hooks(data, events, entry, ours=lambda hook: _ours(hook, url), tool_events=TOOL_EVENTS)
    if approve and add_approving_hook(data, entry, approve):
        added.append(f"PreToolUse ({approve}: every use waits for the team)")
    if added:
        settings_files.save(path, data)
    said = [f"Hooks to {url} for {', '.join(added) or 'no new events (already there)'} in {path}."]
    # The token of this project's MCP registration, if it has one: the same agent, and no new token a run.
    try:
        mcp_config = settings_files.load(config_path(setup))
    except SetupError:
        mcp_config = {}
    known = registered_token(mcp_config, project_of(setup), setup.name)
    token = setup.token(f"claude-code hooks ({Path(project_of(setup)).name})", known)
    return [*said, token_line("Claude Code", token, token_env)]


def registered_token(data: dict[str, Any], project: str, name: str) -> str:
    """The bearer token this project's entry already sends ("" if none); the command checks it is still good."""
    entry = data.get("projects", {}).get(project, {}).get("mcpServers", {}).get(name, {})
    header = entry.get("headers", {}).get("Authorization", "") if isinstance(entry, dict) else ""
    return header.removeprefix("Bearer ").strip() if isinstance(header, str) else ""
