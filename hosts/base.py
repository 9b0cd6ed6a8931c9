"""What one agent host is, to Hook Bridge: its hook dialect and its settings files, behind one interface.

Each host is one module (hosts/claude_code.py, hosts/gemini.py, …) holding a `Host`: how its hook bodies read in
Claude Code's dialect (the one the endpoint, the team's rules and the approval cards speak: `Bash` with a
`command`, `Write` with a `file_path` and `content`, `Edit` with `old_string` and `new_string`), how a decision
is written back in its own, where it hands people's messages over, and how its settings files are registered
and unregistered. So a rule on `Bash(rm -rf*)` decides Gemini's `run_shell_command` and Cursor's shell command
too, and the card names the host ("Gemini CLI in /home/alice/shop"). A host's tools with no Claude Code
counterpart keep their own names.

The host's original tool name and event are kept in the body beside the translated ones (`host_tool_name`,
`host_event_name`), so a card or an export can say what the host itself called them; which host it was is the
URL's to say (HookCall.host), never the body's.

This module and the host modules import nothing but the standard library and each other: `hookbridge hook`
runs on every tool use a host makes and sets up no Django. What registering needs of the server (a token, the
server's address) the `register` command hands in as a `Setup`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NO_DECISION: dict[str, Any] = {}


class SetupError(Exception):
    """A settings file that cannot be written as asked, or an option that does not fit; the message names which."""


@dataclass(frozen=True)
class Setup:
    """What `register HOST` / `unregister HOST` were asked, and what they need of the server."""

    url: str  # the server's base URL, as the host reaches it (no /mcp)
    name: str  # the MCP server's name in the host
    project: Path | None  # a project folder, or None: the person's own settings
    options: dict[str, Any]  # the host's own options (Host.add_arguments), by dest
    # An agent token for the host to send (register only), given a label for a new one and the token the host's
    # settings already hold ("" if none): --token's, else that one while it is still a good agent token, else new.
    token: Callable[[str, str], str] = field(default=lambda label, known: known)
    hooks: bool = False
    approve: str = ""
    headless: bool = False
    timeout: int | None = None

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    def where(self) -> str:
        """For a token's name: the project's folder name, or "user"."""
        return self.project.name if self.project is not None else "user"


@dataclass(frozen=True)
class Hooked:
    """Where `hookbridge hook` was run: what a host that sends no JSON of its own says with its environment."""

    environ: dict[str, str]
    cwd: str
    parent_pid: int


@dataclass(frozen=True)
class Host:
    name: str  # as in `hookbridge hook <name>`, `register <name>` and AgentSession.host
    title: str  # as people call it, on cards and sessions
    path: str  # where its hooks are POSTed
    # The host's event → Claude Code's. An event not named here is recorded as the host named it.
    events: dict[str, str] = field(default_factory=dict)
    # The host's tool → Claude Code's, for the tools a team rule or a card must recognise.
    tools: dict[str, str] = field(default_factory=dict)
    # The events (Claude Code's names) whose answer the host hands its model: where people's messages and late
    # answers are given over, and marked delivered. Elsewhere they wait, rather than be lost.
    hands_over_at: frozenset[str] = frozenset({"PostToolUse", "Stop"})
    # Whether the host runs `hookbridge hook <name>` (OpenCode's plugin POSTs itself).
    runs_hook_command: bool = True
    # What `register <name>` writes, in a few words for its --help.
    registers: str = ""
    # Whether its "no decision" leaves the call to its own prompt (False: the host would run it unasked, so
    # nobody deciding is a refusal).
    asks_itself: bool = True

    # --- its hook dialect --------------------------------------------------------------------------------------

    def to_claude(self, body: Any) -> Any:
        """The host's hook body in Claude Code's dialect (a body that is not an object is left to the parser)."""
        if not (self.events or self.tools) or not isinstance(body, dict):
            return body
        said = dict(body)
        event = body.get("hook_event_name")
        if isinstance(event, str) and event in self.events:
            said["hook_event_name"] = self.events[event]
            said["host_event_name"] = event
        tool = body.get("tool_name")
        if isinstance(tool, str) and tool in self.tools:
            said["tool_name"] = self.tools[tool]
            said["host_tool_name"] = tool
        return said

    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        """Claude Code's answer to an `event` hook (its dialect), as this host reads it."""
        return answer

    def no_decision(self, body: Any, *, refuse: str = "", why: str = "") -> dict[str, Any]:
        """What the host is told when nobody decided (or the server could not be asked): its own prompt asks.

        `refuse`, for a host run where nobody is at its prompt: the reason it is refused instead. `why`: why
        nobody decided, for a host that shows the person a message beside its own prompt.
        """
        said = self.to_claude(body) if isinstance(body, dict) else None
        event = said.get("hook_event_name") if isinstance(said, dict) else None
        event = event if isinstance(event, str) else ""
        if refuse and event == "PermissionRequest":
            return self.answer(event, {"hookSpecificOutput": {"decision": {"behavior": "deny", "message": refuse}}})
        return self.undecided(event, why)

    def undecided(self, event: str, why: str) -> dict[str, Any]:
        """No decision on `event`, in the host's words; `why` where the host can show it."""
        return self.answer(event, NO_DECISION)

    # --- how `hookbridge hook` talks with it -----------------------------------------------------------------

    def read_hook(self, raw: str, hooked: Hooked) -> str:
        """The body `hookbridge hook` POSTs, from what the host gave it (its stdin, and where it ran)."""
        return raw

    def deliver(self, said: dict[str, Any]) -> tuple[str, str, int]:
        """(stdout, stderr, exit code) that tell the host the answer `said`: JSON on stdout, for most."""
        return json.dumps(said) + "\n", "", 0

    # --- its settings files ------------------------------------------------------------------------------------

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The host's own options for `register` and `unregister` (beside --project, --url, --name, …)."""

    def register(self, setup: Setup) -> list[str]:
        """Write Hook Bridge's hooks and MCP server into the host's settings; the lines to tell the person."""
        raise SetupError(f"{self.title} is not registered by Hook Bridge")

    def unregister(self, setup: Setup) -> list[str]:
        """Take out exactly what `register` wrote; SetupError when nothing of ours is there."""
        raise SetupError(f"{self.title} is not registered by Hook Bridge")

    def refuse_approve(self, setup: Setup) -> None:
        if setup.approve:
            raise SetupError(f"--approve: {self.title} asks the team about every tool use its hooks see already")


class BlockOnly(Host):
    """A host whose hooks can only block (Windsurf, Kiro): exit code 2 with the reason on stderr, which the host
    hands its model; any other exit lets it go on with its own approval. So the team's deny is a block, an allow
    goes on, and nobody deciding goes on to the host's own prompt (`--headless`: blocks)."""

    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        if event == "PermissionRequest":
            decision = decision_of(answer)
            if decision is None:
                return NO_DECISION
            allowed, why = allowed_as_asked(decision)
            # An allow is said (not {}), so a headless registration tells it from nobody deciding.
            return {"block": False} if allowed else {"block": True, "message": why}
        output = answer.get("hookSpecificOutput")
        if event == "PreToolUse" and isinstance(output, dict) and output.get("permissionDecision") == "deny":
            return {"block": True, "message": str(output.get("permissionDecisionReason") or "Denied on Hook Bridge.")}
        return NO_DECISION

    def deliver(self, said: dict[str, Any]) -> tuple[str, str, int]:
        if said.get("block"):
            return "", f"{said.get('message') or 'Denied on Hook Bridge.'}\n", 2
        return "", "", 0


def decision_of(answer: dict[str, Any]) -> dict[str, Any] | None:
    """The PermissionRequest decision in Claude Code's answer, if there is one."""
    output = answer.get("hookSpecificOutput")
    decision = output.get("decision") if isinstance(output, dict) else None
    return decision if isinstance(decision, dict) else None


def allowed_as_asked(decision: dict[str, Any]) -> tuple[bool, str]:
    """(allowed, why not) for a host that cannot run an edited command: an edit is a refusal naming the edit,
    never an allow of the command the person changed."""
    edited = decision.get("updatedInput")
    if decision.get("behavior") == "allow":
        return (False, edited_words(edited)) if isinstance(edited, dict) else (True, "")
    return False, str(decision.get("message") or "Denied on Hook Bridge.")


def edited_words(tool_input: Any) -> str:
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    shown = command if isinstance(command, str) else json.dumps(tool_input, ensure_ascii=False)
    return f"Hook Bridge: the team allowed this only as edited; run this instead: {shown}"


def token_line(title: str, token: str, env: str = "HOOKBRIDGE_TOKEN") -> str:
    # The token goes to the person, never into a file: a project's settings are often committed.
    return f"Before starting {title}, set the token it sends:\n  export {env}={token}"


def hookbridge_command() -> str:
    """The installed `hookbridge` beside this Python (a venv's bin/), else on PATH, else this Python's module."""
    beside = Path(sys.executable).parent / "hookbridge"
    if beside.exists():
        return shlex.quote(str(beside))
    found = shutil.which("hookbridge")
    return shlex.quote(found) if found else f"{shlex.quote(sys.executable)} -m hookbridge_site.cli"


def hook_command(host: str, url: str, *, headless: bool = False, extra: str = "") -> str:
    """The command a host runs as its hook. Headless: nobody is at the host's prompt, so what nobody decided is
    refused, not asked."""
    command = f"{hookbridge_command()} hook {host} --url {shlex.quote(url)}{extra}"
    return command + (" --undecided deny" if headless else "")
