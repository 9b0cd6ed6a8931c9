"""hosts/<host>.py: a host's hook body read in Claude Code's dialect, and the answer written in the host's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hosts import hook_calls
from hosts.amp import AMP
from hosts.claude_code import CLAUDE_CODE
from hosts.cline import CLINE
from hosts.codex import CODEX
from hosts.copilot import COPILOT
from hosts.cursor import CURSOR
from hosts.gemini import GEMINI
from hosts.kiro import KIRO
from hosts.opencode import OPENCODE
from hosts.registry import HOSTS, PATHS, title
from hosts.windsurf import WINDSURF

FIXTURES = Path(__file__).resolve().parent.parent.parent / "tests" / "fixtures"


def gemini(event: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((FIXTURES / "gemini_hooks" / f"{event}.json").read_text())
    return found


def codex(event: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((FIXTURES / "codex_hooks" / f"{event}.json").read_text())
    return found


def copilot(event: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((FIXTURES / "copilot_hooks" / f"{event}.json").read_text())
    return found


def test_geminis_shell_command_reads_as_a_bash_permission_request_keeping_its_own_names() -> None:
    call = hook_calls.parse(GEMINI.to_claude(gemini("BeforeTool")), GEMINI.name)
    assert (call.event, call.tool_name, call.host) == ("PermissionRequest", "Bash", "gemini")
    assert call.tool_input == {"command": "echo hi > made.txt", "description": "Run the command"}
    assert call.body["host_tool_name"] == "run_shell_command"
    assert call.body["host_event_name"] == "BeforeTool"
    assert call.summary() == "Bash: echo hi > made.txt"


def test_an_event_or_tool_it_does_not_know_is_kept_as_gemini_named_it() -> None:
    body = {**gemini("BeforeTool"), "hook_event_name": "BeforeModel", "tool_name": "google_web_search"}
    said = GEMINI.to_claude(body)
    assert (said["hook_event_name"], said["tool_name"]) == ("BeforeModel", "google_web_search")


def test_claude_codes_own_body_and_answer_pass_through_unchanged() -> None:
    body: dict[str, Any] = {"hook_event_name": "PermissionRequest", "session_id": "s", "tool_name": "Bash"}
    assert CLAUDE_CODE.to_claude(body) is body
    answer = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    assert CLAUDE_CODE.answer("PermissionRequest", answer) is answer


def test_a_decision_is_written_as_gemini_reads_it() -> None:
    def decided(decision: dict[str, Any]) -> dict[str, Any]:
        return GEMINI.answer("PermissionRequest", {"hookSpecificOutput": {"decision": decision}})

    assert decided({"behavior": "allow"}) == {"decision": "allow"}
    assert decided({"behavior": "deny", "message": "Not today"}) == {"decision": "deny", "reason": "Not today"}
    assert decided({"behavior": "deny"}) == {"decision": "deny", "reason": "Denied on Hook Bridge."}
    edited = decided({"behavior": "allow", "updatedInput": {"command": "ls"}})
    assert edited["hookSpecificOutput"] == {"hookEventName": "BeforeTool", "tool_input": {"command": "ls"}}


def test_no_decision_asks_at_geminis_prompt_or_refuses_where_nobody_is_there() -> None:
    assert GEMINI.no_decision(gemini("BeforeTool"))["decision"] == "ask"
    refused = GEMINI.no_decision(gemini("BeforeTool"), refuse="Hook Bridge: down; not run.")
    assert refused == {"decision": "deny", "reason": "Hook Bridge: down; not run."}
    assert GEMINI.no_decision(gemini("AfterTool")) == {}, "only a gate has a decision to make"
    assert GEMINI.no_decision(None) == {}


def test_a_message_for_the_agent_after_a_tool_is_geminis_additional_context() -> None:
    said = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "Use pnpm"}}
    assert GEMINI.answer("PostToolUse", said) == {
        "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "Use pnpm"}
    }


def test_geminis_after_agent_reads_as_claude_codes_stop_with_the_turns_last_words() -> None:
    call = hook_calls.parse(GEMINI.to_claude(gemini("AfterAgent")), GEMINI.name)
    assert call.event == "Stop"
    assert call.body["host_event_name"] == "AfterAgent"
    assert call.body["last_assistant_message"] == gemini("AfterAgent")["prompt_response"]
    assert call.body["stop_hook_active"] is False


def test_a_message_for_the_agent_when_its_turn_ends_is_geminis_block_with_the_next_prompt() -> None:
    assert GEMINI.answer("Stop", {"decision": "block", "reason": "Use pnpm"}) == {
        "decision": "block",
        "reason": "Use pnpm",
    }
    assert GEMINI.answer("Stop", {}) == {}
    assert GEMINI.no_decision(gemini("AfterAgent")) == {}, "with the server down the turn just ends"


def test_codexs_permission_request_is_claude_codes_own_a_bash_command() -> None:
    call = hook_calls.parse(CODEX.to_claude(codex("PermissionRequest")), CODEX.name)
    assert (call.event, call.tool_name, call.host) == ("PermissionRequest", "Bash", "codex")
    assert call.summary() == "Bash: echo made > hi.txt"
    assert "host_tool_name" not in call.body, "nothing renamed"


def permission(decision: dict[str, Any]) -> dict[str, Any]:
    return CODEX.answer("PermissionRequest", {"hookSpecificOutput": {"decision": decision}})


def test_a_decision_is_written_with_only_the_fields_codex_takes() -> None:
    def decision(said: dict[str, Any]) -> dict[str, Any]:
        assert said["hookSpecificOutput"]["hookEventName"] == "PermissionRequest"
        found: dict[str, Any] = said["hookSpecificOutput"]["decision"]
        return found

    assert decision(permission({"behavior": "allow", "message": "", "extra": 1})) == {"behavior": "allow"}
    assert decision(permission({"behavior": "deny", "message": "Not today"})) == {
        "behavior": "deny", "message": "Not today",
    }  # fmt: skip
    assert decision(permission({"behavior": "deny"}))["message"] == "Denied on Hook Bridge."


def test_an_edited_command_is_never_allowed_as_first_asked_but_refused_naming_the_edit() -> None:
    # Codex fails closed on updatedInput: it cannot run the person's edit, and must not run the original.
    said = permission({"behavior": "allow", "updatedInput": {"command": "npm test -- --ci"}})
    assert said["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": "Hook Bridge: the team allowed this only as edited; run this instead: npm test -- --ci",
    }
    ruled = CODEX.answer(
        "PreToolUse",
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                "permissionDecisionReason": "ok", "updatedInput": {"command": "ls"}}},
    )  # fmt: skip
    assert ruled["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "updatedInput" not in ruled["hookSpecificOutput"]


def test_no_decision_leaves_codex_to_its_own_prompt_or_refuses_where_nobody_is_there() -> None:
    assert CODEX.no_decision(codex("PermissionRequest")) == {}
    refused = CODEX.no_decision(codex("PermissionRequest"), refuse="Hook Bridge: down; not run.")
    assert refused == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "Hook Bridge: down; not run."},
        }
    }
    assert CODEX.no_decision(codex("PostToolUse")) == {}


def test_copilots_permission_request_reads_as_a_bash_permission_request_keeping_its_own_names() -> None:
    sent = copilot("PermissionRequest")
    assert (sent["hookName"], sent["toolName"]) == ("permissionRequest", "bash"), "camelCase whatever it is called"
    call = hook_calls.parse(COPILOT.to_claude(sent), COPILOT.name)
    assert (call.event, call.tool_name, call.host, call.session_id) == (
        "PermissionRequest", "Bash", "copilot", sent["sessionId"],
    )  # fmt: skip
    assert call.tool_input == {"command": "echo made > hi.txt"}
    assert (call.body["host_tool_name"], call.body["host_event_name"]) == ("bash", "permissionRequest")
    pre = hook_calls.parse(COPILOT.to_claude(copilot("PreToolUse")), COPILOT.name)
    assert (pre.event, pre.tool_name) == ("PreToolUse", "Bash"), "its PascalCase hooks already speak Claude Code's"


def test_a_decision_is_written_at_the_top_level_as_copilot_reads_it() -> None:
    def decided(decision: dict[str, Any]) -> dict[str, Any]:
        return COPILOT.answer("PermissionRequest", {"hookSpecificOutput": {"decision": decision}})

    assert decided({"behavior": "allow"}) == {"behavior": "allow"}
    assert decided({"behavior": "deny", "message": "Not today"}) == {"behavior": "deny", "message": "Not today"}
    edited = decided({"behavior": "allow", "updatedInput": {"command": "ls"}})
    assert edited == {
        "behavior": "deny",
        "message": "Hook Bridge: the team allowed this only as edited; run this instead: ls",
    }
    assert COPILOT.no_decision(copilot("PermissionRequest")) == {}, "Copilot's own permission flow decides"
    assert COPILOT.no_decision(copilot("PermissionRequest"), refuse="down") == {"behavior": "deny", "message": "down"}
    stop = {"decision": "block", "reason": "Use pnpm"}
    assert COPILOT.answer("Stop", stop) is stop


def test_opencodes_permission_is_a_bash_request_and_its_answer_a_reply_its_plugin_passes_on() -> None:
    # The body the plugin (hosts/opencode.py) builds from a permission.asked event.
    sent = {
        "hook_event_name": "PermissionRequest",
        "session_id": "ses_21f58",
        "cwd": "/home/alice/shop",
        "tool_name": "bash",
        "tool_input": {"command": "echo made > hi.txt", "patterns": ["echo made > hi.txt"]},
    }
    call = hook_calls.parse(OPENCODE.to_claude(sent), OPENCODE.name)
    assert (call.event, call.tool_name, call.body["host_tool_name"]) == ("PermissionRequest", "Bash", "bash")

    def decided(decision: dict[str, Any]) -> dict[str, Any]:
        return OPENCODE.answer("PermissionRequest", {"hookSpecificOutput": {"decision": decision}})

    assert decided({"behavior": "allow"}) == {"reply": "once"}
    assert decided({"behavior": "deny", "message": "No"}) == {"reply": "reject", "message": "No"}
    assert decided({"behavior": "allow", "updatedInput": {"command": "ls"}})["reply"] == "reject"
    assert OPENCODE.no_decision(sent) == {}, "OpenCode's own prompt asks"


def test_each_host_has_one_path_and_a_title_people_know() -> None:
    assert PATHS == {
        "/hooks/claude": CLAUDE_CODE, "/hooks/gemini": GEMINI, "/hooks/codex": CODEX, "/hooks/copilot": COPILOT,
        "/hooks/opencode": OPENCODE, "/hooks/cursor": CURSOR, "/hooks/cline": CLINE, "/hooks/amp": AMP,
        "/hooks/windsurf": WINDSURF,
        "/hooks/kiro": KIRO,
    }  # fmt: skip
    assert set(HOSTS) == {
        "claude-code",
        "gemini",
        "codex",
        "copilot",
        "opencode",
        "cursor",
        "cline",
        "amp",
        "windsurf",
        "kiro",
    }
    assert title("gemini") == "Gemini CLI"
    assert title("codex") == "Codex"
    assert title("someone-new") == "someone-new"
