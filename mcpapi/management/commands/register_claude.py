"""Register this Hook Bridge server with Claude Code for a project (in ~/.claude.json)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core import commands, presence
from mcpapi import claude_config
from tokens.models import AgentToken, Scope


class Command(commands.Command):
    help = "Write the Hook Bridge server entry into ~/.claude.json for a project (or --print it instead)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", default=str(Path.cwd()), help="the project folder (default: here)")
        parser.add_argument("--name", default="hookbridge", help="the server's name in Claude Code")
        parser.add_argument(
            "--url",
            default=None,
            help="the server's base URL, as people reach it (default: the running `serve`'s address, or "
            "HOOKBRIDGE_PUBLIC_URL); the MCP endpoint is <url>/mcp and the hooks' <url>/hooks/claude",
        )
        parser.add_argument(
            "--token",
            default="",
            help="an agent token (default: the one this project's registration already has, else a new one)",
        )
        parser.add_argument("--config", default=None, help="the file to write (default: ~/.claude.json)")
        parser.add_argument("--print", action="store_true", help="print the .mcp.json entry and claude mcp add line")
        hooks = parser.add_argument_group("Claude Code's hooks (--hooks): approvals, live sessions, messages")
        hooks.add_argument("--hooks", action="store_true", help="write the hooks block into a settings file instead")
        hooks.add_argument(
            "--scope",
            choices=["local", "project", "user"],
            default="local",
            help="local: .claude/settings.local.json (default, not committed); project: .claude/settings.json; "
            "user: ~/.claude/settings.json",
        )
        hooks.add_argument("--settings-file", default=None, help="write this settings file instead")
        hooks.add_argument(
            "--events",
            default=",".join(claude_config.HOOK_EVENTS),
            help=f"the events to send (default: {','.join(claude_config.HOOK_EVENTS)})",
        )
        hooks.add_argument(
            "--approve",
            default="",
            metavar="TOOLS",
            help="tools (a regular expression on the tool's name, e.g. 'Bash|Write|Edit') whose every use waits for "
            "the team's decision, even where Claude Code would run it without asking (its auto mode, its allow rules)",
        )
        hooks.add_argument("--token-env", default="HOOKBRIDGE_TOKEN", help="the variable the token is read from")
        hooks.add_argument("--timeout", type=int, default=600, help="the host's hook timeout in seconds")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["hooks"]:
            self.register_hooks(options)
            return
        project = str(Path(options["project"]).resolve())
        path = config_path(options)
        try:
            data = claude_config.load(path)
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        token = options["token"] or registered_token(data, project, options["name"])
        if not token:
            _, token = AgentToken.issue(f"claude-code ({Path(project).name})")
        url = mcp_url(options)
        entry = {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}
        if options["print"]:
            self.stdout.write(json.dumps({"mcpServers": {options["name"]: entry}}, indent=2))
            self.stdout.write(
                f'claude mcp add --transport http {options["name"]} {url} --header "Authorization: Bearer {token}"'
            )
            return
        try:
            claude_config.add_server(data, project, options["name"], entry)
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        claude_config.save(path, data)
        self.stdout.write(f"Registered '{options['name']}' ({url}) for {project} in {path}.")
        self.stdout.write("Restart Claude Code to pick up the change.")

    def register_hooks(self, options: dict[str, Any]) -> None:
        events = [event.strip() for event in options["events"].split(",") if event.strip()]
        unknown = [event for event in events if event not in claude_config.HOOK_EVENTS]
        if unknown or not events:
            known = ", ".join(claude_config.HOOK_EVENTS)
            raise CommandError(f"--events: unknown event {', '.join(unknown) or '(none given)'}; known: {known}")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", options["token_env"]):
            raise CommandError(f"--token-env: {options['token_env']!r} is not an environment variable name")
        approve = options["approve"].strip()
        if approve:
            try:
                re.compile(approve)
            except re.error as exc:
                raise CommandError(f"--approve: {approve!r} is not a regular expression ({exc})") from None
        path = hooks_settings_path(options)
        url = hooks_url(options)
        entry = claude_config.hook_entry(url, options["token_env"], options["timeout"])
        try:
            data = claude_config.load(path)
            added = claude_config.add_hooks(data, events, entry)
            if approve and claude_config.add_approving_hook(data, entry, approve):
                added.append(f"PreToolUse ({approve}: every use waits for the team)")
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        if added:
            path.parent.mkdir(parents=True, exist_ok=True)
            claude_config.save(path, data)
        self.stdout.write(f"Hooks to {url} for {', '.join(added) or 'no new events (already there)'} in {path}.")
        project = str(Path(options["project"]).resolve())
        token = options["token"]
        if not token:
            # The token of this project's MCP registration, if it has one: the same agent, and no new token a run.
            try:
                mcp_config = claude_config.load(config_path(options))
            except claude_config.ConfigError:
                mcp_config = {}
            token = registered_token(mcp_config, project, options["name"])
        if not token:
            _, token = AgentToken.issue(f"claude-code hooks ({Path(project).name})")
        # The token goes to the person, never into the file: a settings file is often committed.
        self.stdout.write(
            f"Before starting Claude Code, set the token it sends:\n  export {options['token_env']}={token}"
        )


def config_path(options: dict[str, Any]) -> Path:
    """The file Claude Code keeps its MCP servers in: --config, or ~/.claude.json."""
    return Path(options["config"]) if options["config"] else claude_config.default_path()


def hooks_settings_path(options: dict[str, Any]) -> Path:
    if options["settings_file"]:
        return Path(options["settings_file"])
    return claude_config.settings_path(Path(options["project"]).resolve(), options["scope"])


def base_url(options: dict[str, Any]) -> str:
    """--url as the server's base URL; one that names an MCP endpoint (…/mcp, …/mcp/<sets>) counts as its server's."""
    url = (options.get("url") or presence.public_url()).rstrip("/")
    return url[: -len("/mcp")] if url.endswith("/mcp") else url.split("/mcp/")[0]


def mcp_url(options: dict[str, Any]) -> str:
    """The MCP endpoint: <base>/mcp, or the tool sets' endpoint a --url named."""
    url = (options.get("url") or "").rstrip("/")
    return url if "/mcp/" in url else f"{base_url(options)}/mcp"


def hooks_url(options: dict[str, Any]) -> str:
    """The hook endpoint of the server --url names."""
    return f"{base_url(options)}/hooks/claude"


def registered_token(data: dict[str, Any], project: str, name: str) -> str:
    """The agent token this project's entry already sends, if it is still an active agent token; else ""."""
    entry = data.get("projects", {}).get(project, {}).get("mcpServers", {}).get(name, {})
    header = entry.get("headers", {}).get("Authorization", "") if isinstance(entry, dict) else ""
    token = header.removeprefix("Bearer ").strip() if isinstance(header, str) else ""
    known = AgentToken.authenticate(token) if token else None
    return token if known is not None and known.scope == Scope.AGENT else ""
