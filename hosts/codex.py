"""Codex CLI: its command hooks speak Claude Code's dialect, stricter; its hooks.json and config.toml.

Its hook JSON already speaks Claude Code's dialect (PermissionRequest, PreToolUse, PostToolUse, Stop; a shell
command is `Bash` with a `command`), so only the answer is rewritten. Codex refuses an answer with a field it
does not know, and fails closed on a PermissionRequest decision carrying `updatedInput` (it cannot run an
edited command): a person's edit is sent as a deny whose message gives the edited command, so the model runs
that one instead (and is asked again), never the one the person changed. "No decision" is `{}`: Codex shows
its own approval prompt. Its other tools (apply_patch, MCP tools) keep their names.

The hooks are command hooks running `hookbridge hook codex --url <server>` (in `$CODEX_HOME/hooks.json`, or a
project's `.codex/hooks.json`); the token comes from the environment ($HOOKBRIDGE_TOKEN, which Codex passes to
its hooks and names in the MCP entry's `bearer_token_env_var`), never from a file.

Codex runs a hook it has not been told to trust as nothing at all, silently (0.169: no warning, no prompt in
`codex exec`; the TUI's /hooks lists it as "needs review"). Trust is a `[hooks.state."<hooks.json's absolute
path>:<event>:<group>:<handler>"]` table in config.toml whose `trusted_hash` is Codex's hash of the hook's
definition (`trusted_hash`), so `register codex` writes that beside the MCP server entry: the person running
it is the one who would have pressed "trust" in /hooks. The key holds the group's position: a hand edit that
moves our group makes Codex skip it again until `register codex` is run once more.

config.toml is TOML a person edits, so it is never rewritten: Hook Bridge's lines go at its end between two
marker comments, and unregister takes out exactly those lines.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from hosts import settings_files
from hosts.base import (
    NO_DECISION,
    Host,
    Setup,
    SetupError,
    allowed_as_asked,
    decision_of,
    edited_words,
    hook_command,
    token_line,
)
from hosts.settings_files import ConfigError

# Codex's events, in Claude Code's names. PermissionRequest is the approval (it fires where Codex would ask);
# PreToolUse lets a team rule deny a command Codex would have run unasked; the rest make the session's timeline,
# and PostToolUse and Stop hand the model people's messages and late answers.
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop")
TIMEOUT_SECONDS = 600
TOOL_TIMEOUT_SECONDS = 3600
BEGIN = "# >>> Hook Bridge (`hookbridge register codex`; `hookbridge unregister codex` takes these lines out)"
# The same, when the file did not end in a newline and one was added before the block (taken out with it).
BEGIN_AFTER_NEWLINE = BEGIN.replace(">>>", ">>>+")
END = "# <<< Hook Bridge"


def codex_home(project: Path | None) -> Path:
    """A project's .codex folder, or the user's: $CODEX_HOME, else ~/.codex."""
    if project is not None:
        return project / ".codex"
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def _ours(hook: Any) -> bool:
    return isinstance(hook, dict) and hook.get("type") == "command" and " hook codex" in str(hook.get("command"))


def add_hooks(data: dict[str, Any], command: str, timeout_seconds: int = TIMEOUT_SECONDS) -> list[str]:
    """Our hook under each event (once), with no matcher: every tool. Returns the events it was added to."""
    entry = {"type": "command", "command": command, "timeout": timeout_seconds}
    return settings_files.add_hooks(data, EVENTS, entry, ours=_ours, tool_events=())


def remove_hooks(data: dict[str, Any]) -> list[str]:
    return settings_files.remove_hooks_where(data, _ours)


def trusted_hash(event: str, group: dict[str, Any], handler: dict[str, Any]) -> str:
    """Codex's hash of one hook's definition, the one /hooks records when a person trusts it.

    Codex (codex-rs/hooks discovery) hashes the event's snake_case label with the matcher group holding only
    this handler, normalised (the timeout always set, `async` always there, fields that are unset left out),
    as JSON with every object's keys sorted and no spaces, by SHA-256.
    """
    normalised: dict[str, Any] = {
        "type": "command",
        "command": handler["command"],
        "timeout": max(int(handler.get("timeout") or TIMEOUT_SECONDS), 1),
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        normalised["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": event_label(event), "hooks": [normalised]}
    if group.get("matcher") is not None and event not in ("UserPromptSubmit", "Stop"):
        identity["matcher"] = group["matcher"]
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def event_label(event: str) -> str:
    """PermissionRequest → permission_request, as Codex keys its hooks' state."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def trust_entries(hooks_file: Path, data: dict[str, Any]) -> dict[str, str]:
    """{state key: trusted_hash} for each of our hooks in `data` (hooks.json as saved at `hooks_file`)."""
    found = {}
    for event, groups in (data.get("hooks") or {}).items():
        for group_index, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler_index, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if _ours(handler):
                    key = f"{hooks_file}:{event_label(event)}:{group_index}:{handler_index}"
                    found[key] = trusted_hash(event, group, handler)
    return found


def block(mcp_name: str, mcp_url: str, trust: dict[str, str]) -> str:
    """Hook Bridge's lines for config.toml: the MCP server entry and the hooks' trust, between the markers."""
    lines = [
        BEGIN,
        f"[mcp_servers.{_key(mcp_name)}]",
        f"url = {_string(mcp_url)}",
        'bearer_token_env_var = "HOOKBRIDGE_TOKEN"',
        # Asking the team is what these tools are for: Codex would otherwise ask for approval to ask.
        'default_tools_approval_mode = "approve"',
        # A person takes minutes, Codex gives a tool 60 s by default; past this the model asks again and the
        # same question is picked up (HOOKBRIDGE_REATTACH_WINDOW).
        f"tool_timeout_sec = {TOOL_TIMEOUT_SECONDS}",
    ]
    for key, digest in trust.items():
        lines += ["", f"[hooks.state.{_string(key)}]", f"trusted_hash = {_string(digest)}"]
    return "\n".join([*lines, END, ""])


def add_block(text: str | None, new_block: str, path: Path) -> str:
    """config.toml's `text` with our block at its end (an earlier one of ours replaced); refused if that would
    not be valid TOML (the entry's name or a hook's state already set by hand)."""
    kept = remove_block(text or "")
    if kept and not kept.endswith("\n"):
        result = kept + "\n" + new_block.replace(BEGIN, BEGIN_AFTER_NEWLINE, 1)
    else:
        result = kept + new_block
    try:
        tomllib.loads(result)
    except tomllib.TOMLDecodeError as exc:
        try:
            tomllib.loads(kept)
        except tomllib.TOMLDecodeError:
            raise ConfigError(f"{path} is not valid TOML ({exc}); refusing to touch it") from None
        raise ConfigError(
            f"{path} already sets what Hook Bridge would add ({exc}): an [mcp_servers] entry of that name or "
            "one of its hooks' [hooks.state]; take it out, or pick another --name"
        ) from None
    return result


def remove_block(text: str) -> str:
    """`text` without our block (and the newline added before it, if one was): as it was before register."""
    lines = text.splitlines(keepends=True)
    for start, line in enumerate(lines):
        marker = line.rstrip("\n")
        if marker in (BEGIN, BEGIN_AFTER_NEWLINE):
            end = next((n for n in range(start, len(lines)) if lines[n].rstrip("\n") == END), len(lines) - 1)
            before = "".join(lines[:start])
            if marker == BEGIN_AFTER_NEWLINE and before.endswith("\n"):
                before = before[:-1]
            return before + "".join(lines[end + 1 :])
    return text


def has_block(text: str) -> bool:
    return any(line in (BEGIN, BEGIN_AFTER_NEWLINE) for line in text.splitlines())


def _string(value: str) -> str:
    # A TOML basic string is JSON's, for the characters a path, a URL or a hash holds.
    return json.dumps(value, ensure_ascii=False)


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _string(name)


class Codex(Host):
    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        output = answer.get("hookSpecificOutput")
        if event == "PermissionRequest":
            decision = decision_of(answer)
            if decision is None:
                return NO_DECISION
            allowed, why = allowed_as_asked(decision)
            said = {"behavior": "allow"} if allowed else {"behavior": "deny", "message": why}
            return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": said}}
        if event == "PreToolUse" and isinstance(output, dict):
            kept = {
                key: output[key]
                for key in ("hookEventName", "permissionDecision", "permissionDecisionReason")
                if key in output
            }
            if "updatedInput" in output:
                kept.update(permissionDecision="deny", permissionDecisionReason=edited_words(output["updatedInput"]))
            return {"hookSpecificOutput": kept}
        return answer

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--codex-home", default=None, help="that folder instead of $CODEX_HOME (~/.codex)")

    def register(self, setup: Setup) -> list[str]:
        self.refuse_approve(setup)
        home = home_of(setup)
        hooks_file, config_file = home / "hooks.json", home / "config.toml"
        # Headless (`codex exec`): nobody is at an approval prompt, so what nobody decided is refused, not asked.
        command = hook_command(self.name, setup.url, headless=setup.headless)
        data = settings_files.load(hooks_file)
        # A changed command (another URL, --headless) is a new hook: the old one goes, and its trust with it.
        remove_hooks(data)
        add_hooks(data, command, setup.timeout or TIMEOUT_SECONDS)
        config_text = config_file.read_text() if config_file.exists() else None
        trust = trust_entries(hooks_file.absolute(), data)
        config = add_block(config_text, block(setup.name, setup.mcp_url, trust), config_file)
        settings_files.save(hooks_file, data)
        settings_files.write_atomically(config_file, config)
        said = [
            f"Codex: hooks ({', '.join(EVENTS)}) in {hooks_file}, trusted, and the MCP server "
            f"'{setup.name}' in {config_file}.",
            token_line(self.title, setup.token(f"codex ({setup.where()})", "")),
        ]
        if setup.project is not None:
            said.append(
                "Codex reads a project's .codex folder only once you trust the project (it asks on first start)."
            )
        return said

    def unregister(self, setup: Setup) -> list[str]:
        home = home_of(setup)
        hooks_file, config_file = home / "hooks.json", home / "config.toml"
        data = settings_files.load(hooks_file)
        removed = [f"hooks ({', '.join(events)})" for events in [remove_hooks(data)] if events]
        config = config_file.read_text() if config_file.exists() else ""
        if has_block(config):
            removed.append("the MCP server and the hooks' trust")
        if not removed:
            raise SetupError(f"nothing of Hook Bridge's is in {home}")
        # A file that held only what register wrote goes with it, as it was not there before.
        settings_files.save_or_remove(hooks_file, data)
        if kept := remove_block(config):
            settings_files.write_atomically(config_file, kept)
        elif config_file.exists():
            config_file.unlink()
        return [f"Removed {', '.join(removed)} from {home}."]


CODEX = Codex(
    name="codex",
    title="Codex",
    path="/hooks/codex",
    registers="its command hooks, their trust and its MCP server in ~/.codex (or the project's .codex)",
)


def home_of(setup: Setup) -> Path:
    if setup.options.get("codex_home"):
        return Path(setup.options["codex_home"])
    return codex_home(setup.project.resolve() if setup.project is not None else None)
