"""Agent hosts whose hooks reach the team: Claude Code, and Gemini CLI, Codex, Copilot CLI and OpenCode in its terms.

One rule set, one kind of card, one timeline: a host's hook JSON is read into Claude Code's dialect (the one
the endpoint, the team rules and the approval cards speak: `Bash` with a `command`, `Write` with a
`file_path` and `content`, `Edit` with `old_string` and `new_string`), and the answer is written back in the
host's own. So a rule on `Bash(rm -rf*)` decides Gemini's `run_shell_command` too, and the card names the
host ("Gemini CLI in /home/alice/shop"). A host's tools with no Claude Code counterpart keep their own names.

The host's original tool name and event are kept in the body beside the translated ones (`host_tool_name`,
`host_event_name`), so a card or an export can say what the host itself called them; which host it was is the
URL's to say (HookCall.host), never the body's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

NO_DECISION: dict[str, Any] = {}


@dataclass(frozen=True)
class Host:
    name: str  # as in `hookbridge hook <name>` and AgentSession.host
    title: str  # as people call it, on cards and sessions
    path: str  # where its hooks are POSTed
    # The host's event → Claude Code's. An event not named here is recorded as the host named it.
    events: dict[str, str] = field(default_factory=dict)
    # The host's tool → Claude Code's, for the tools a team rule or a card must recognise.
    tools: dict[str, str] = field(default_factory=dict)
    # The events (Claude Code's names) whose answer the host hands its model: where people's messages and late
    # answers are given over, and marked delivered. Elsewhere they wait, rather than be lost.
    hands_over_at: frozenset[str] = frozenset({"PostToolUse", "Stop"})

    def to_claude(self, body: dict[str, Any]) -> dict[str, Any]:
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

    def no_decision(self, body: Any, *, refuse: str = "") -> dict[str, Any]:
        """What the host is told when nobody decided (or the server could not be asked): its own prompt asks.

        `refuse`, for a host run where nobody is at its prompt: the reason it is refused instead.
        """
        said = self.to_claude(body) if isinstance(body, dict) else None
        event = said.get("hook_event_name") if isinstance(said, dict) else None
        event = event if isinstance(event, str) else ""
        if refuse and event == "PermissionRequest":
            return self.answer(event, {"hookSpecificOutput": {"decision": {"behavior": "deny", "message": refuse}}})
        return self.answer(event, NO_DECISION)


def _decision(answer: dict[str, Any]) -> dict[str, Any] | None:
    output = answer.get("hookSpecificOutput")
    decision = output.get("decision") if isinstance(output, dict) else None
    return decision if isinstance(decision, dict) else None


@dataclass(frozen=True)
class Gemini(Host):
    """Gemini CLI's command hooks (settings.json `hooks`): BeforeTool gates a tool, exit code 0 and JSON out.

    Its BeforeTool decisions: "allow", "deny" (the model reads "Tool execution blocked: <reason>"), and "ask",
    which makes the CLI ask at its own prompt whatever its approval mode (`--yolo` included): what "no
    decision" must be, so nothing runs that nobody allowed. `gemini -p` has no prompt to ask at and waits on
    "ask" for ever (0.61), so a headless registration refuses instead (`hookbridge hook gemini --undecided deny`).

    Its AfterAgent is Claude Code's Stop: the turn's last words are its `prompt_response`, and a "block" with a
    reason sends the reason to the model as the next prompt (then AfterAgent comes again, `stop_hook_active`).
    """

    def to_claude(self, body: dict[str, Any]) -> dict[str, Any]:
        said = super().to_claude(body)
        if isinstance(said, dict) and said.get("host_event_name") == "AfterAgent" and "prompt_response" in said:
            said["last_assistant_message"] = said["prompt_response"]
        return said

    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        if event == "Stop":
            # Claude Code's {"decision": "block", "reason": …} is Gemini's own: the reason is the model's next prompt.
            return answer
        if event == "PermissionRequest":
            decision = _decision(answer)
            if decision is None:
                return {"decision": "ask", "systemMessage": "Hook Bridge: nobody on the team decided; asking here."}
            if decision.get("behavior") != "allow":
                return {"decision": "deny", "reason": str(decision.get("message") or "Denied on Hook Bridge.")}
            allowed: dict[str, Any] = {"decision": "allow"}
            if isinstance(decision.get("updatedInput"), dict):
                allowed["hookSpecificOutput"] = {"hookEventName": "BeforeTool", "tool_input": decision["updatedInput"]}
            return allowed
        output = answer.get("hookSpecificOutput")
        if isinstance(output, dict) and "additionalContext" in output:
            # People's messages and late answers, handed to the model after a tool ran.
            return {
                "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": output["additionalContext"]}
            }
        return NO_DECISION


@dataclass(frozen=True)
class Codex(Host):
    """Codex CLI's command hooks (~/.codex/hooks.json): Claude Code's events and shapes, stricter.

    Its hook JSON already speaks Claude Code's dialect (PermissionRequest, PreToolUse, PostToolUse, Stop; a
    shell command is `Bash` with a `command`), so only the answer is rewritten. Codex refuses an answer with a
    field it does not know, and fails closed on a PermissionRequest decision carrying `updatedInput` (it
    cannot run an edited command): a person's edit is sent as a deny whose message gives the edited
    command, so the model runs that one instead (and is asked again), never the one the person changed.
    "No decision" is `{}`: Codex shows its own approval prompt.
    """

    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        output = answer.get("hookSpecificOutput")
        if event == "PermissionRequest":
            decision = _decision(answer)
            if decision is None:
                return NO_DECISION
            allowed, why = _allowed_as_asked(decision)
            said = {"behavior": "allow"} if allowed else {"behavior": "deny", "message": why}
            return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": said}}
        if event == "PreToolUse" and isinstance(output, dict):
            kept = {
                key: output[key]
                for key in ("hookEventName", "permissionDecision", "permissionDecisionReason")
                if key in output
            }
            if "updatedInput" in output:
                kept.update(permissionDecision="deny", permissionDecisionReason=_edited(output["updatedInput"]))
            return {"hookSpecificOutput": kept}
        return answer


def _allowed_as_asked(decision: dict[str, Any]) -> tuple[bool, str]:
    """(allowed, why not) for a host that cannot run an edited command: an edit is a refusal naming the edit,
    never an allow of the command the person changed."""
    edited = decision.get("updatedInput")
    if decision.get("behavior") == "allow":
        return (False, _edited(edited)) if isinstance(edited, dict) else (True, "")
    return False, str(decision.get("message") or "Denied on Hook Bridge.")


def _edited(tool_input: Any) -> str:
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    shown = command if isinstance(command, str) else json.dumps(tool_input, ensure_ascii=False)
    return f"Hook Bridge: the team allowed this only as edited; run this instead: {shown}"


@dataclass(frozen=True)
class Copilot(Host):
    """GitHub Copilot CLI's command hooks (~/.copilot/settings.json `hooks`).

    Registered under the PascalCase event names, Copilot CLI sends Claude Code's own bodies (`hook_event_name`,
    `session_id`, `tool_name` "Bash" with a `command`), so they pass as they are. Its approval is its
    `permissionRequest` hook, which has one shape whatever the case of its name: camelCase (`hookName`,
    `sessionId`, `toolName` "bash", `toolInput`), read here as a PermissionRequest; its answer is
    `{"behavior": "allow" | "deny", "message": …}` at the top level, and `{}` leaves it to Copilot's own
    permission flow (its prompt, or in `copilot -p` a refusal: "no one to approve"). It cannot take an edited
    command from a hook: an edit is sent as a deny naming it.
    """

    def to_claude(self, body: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(body, dict) or body.get("hookName") != "permissionRequest":
            return super().to_claude(body)
        tool = body.get("toolName")
        said = {key: value for key, value in body.items() if key not in ("hookName", "sessionId", "toolName")}
        said.update(
            hook_event_name="PermissionRequest",
            host_event_name="permissionRequest",
            session_id=body.get("sessionId"),
            tool_name=self.tools.get(tool, tool) if isinstance(tool, str) else tool,
            tool_input=said.pop("toolInput", None),
            permission_suggestions=said.pop("permissionSuggestions", []),
        )
        if isinstance(tool, str) and tool in self.tools:
            said["host_tool_name"] = tool
        return said

    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        if event != "PermissionRequest":
            return answer
        decision = _decision(answer)
        if decision is None:
            return NO_DECISION
        allowed, why = _allowed_as_asked(decision)
        return {"behavior": "allow"} if allowed else {"behavior": "deny", "message": why}


@dataclass(frozen=True)
class OpenCode(Host):
    """OpenCode, through the plugin `register opencode` writes (mcpapi/opencode_config.py).

    OpenCode 1.18 never calls a plugin's `permission.ask` hook; it publishes `permission.asked` to every plugin's
    `event` hook and takes a reply on its own API. The plugin POSTs the request here in Claude Code's words
    (built by the plugin: `PermissionRequest`, the session, `tool_name` as OpenCode's permission, `bash`, and
    its metadata as `tool_input`) and replies with what it is told: `{"reply": "once" | "reject"}`; `{}` leaves
    the request to OpenCode's own prompt. An edit cannot be taken from a plugin: it is rejected, naming it.
    """

    def answer(self, event: str, answer: dict[str, Any]) -> dict[str, Any]:
        if event != "PermissionRequest":
            return NO_DECISION
        decision = _decision(answer)
        if decision is None:
            return NO_DECISION
        allowed, why = _allowed_as_asked(decision)
        return {"reply": "once"} if allowed else {"reply": "reject", "message": why}


CLAUDE_CODE = Host(name="claude-code", title="Claude Code", path="/hooks/claude")
GEMINI = Gemini(
    name="gemini",
    title="Gemini CLI",
    path="/hooks/gemini",
    events={
        "BeforeTool": "PermissionRequest",
        "AfterTool": "PostToolUse",
        "BeforeAgent": "UserPromptSubmit",
        "AfterAgent": "Stop",
        "SessionStart": "SessionStart",
        "SessionEnd": "SessionEnd",
    },
    tools={"run_shell_command": "Bash", "write_file": "Write", "replace": "Edit", "read_file": "Read"},
)

# Codex's events and its shell tool are Claude Code's own names; its other tools (apply_patch, MCP tools) keep theirs.
CODEX = Codex(name="codex", title="Codex", path="/hooks/codex")

# Copilot CLI's permissionRequest names its tools in lower case ("bash"); its PascalCase hooks already say "Bash".
# Copilot CLI reads a command hook's answer to postToolUse not at all; its Stop takes {"decision": "block", "reason"}.
COPILOT = Copilot(
    name="copilot",
    title="Copilot CLI",
    path="/hooks/copilot",
    tools={"bash": "Bash"},
    hands_over_at=frozenset({"Stop"}),
)

# OpenCode's permission for a shell command is "bash".
OPENCODE = OpenCode(
    name="opencode", title="OpenCode", path="/hooks/opencode", tools={"bash": "Bash"}, hands_over_at=frozenset()
)

HOSTS: dict[str, Host] = {host.name: host for host in (CLAUDE_CODE, GEMINI, CODEX, COPILOT, OPENCODE)}
PATHS: dict[str, Host] = {host.path: host for host in HOSTS.values()}


def title(name: str) -> str:
    """A host's name as people call it ("Gemini CLI"); an unknown one as it is."""
    host = HOSTS.get(name)
    return host.title if host is not None else name
