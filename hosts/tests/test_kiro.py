"""hosts/kiro.py: Kiro CLI's hook events read in Claude Code's dialect (fixtures from its hooks documentation), its
block-only answer, its hook file written and taken out exactly, and its own MCP tools needing nobody."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from hosts import hook_calls, hook_client
from hosts.base import Hooked
from hosts.kiro import KIRO

FIXTURES = Path(__file__).resolve().parent.parent.parent / "tests" / "fixtures" / "kiro_hooks"
HOOKED = Hooked(environ={}, cwd="/home/alice/elsewhere", parent_pid=4242)


def fixture(name: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return found


def read(name: str, **changes: Any) -> hook_calls.HookCall:
    """The fixture as `hookbridge hook kiro` POSTs it, read as the endpoint reads it."""
    sent = json.loads(KIRO.read_hook(json.dumps({**fixture(name), **changes}), HOOKED))
    return hook_calls.parse(KIRO.to_claude(sent), "kiro")


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_kiros_shell_command_is_a_bash_permission_request_in_the_run_that_made_it() -> None:
    call = read("pre_tool_use_shell")
    assert (call.event, call.tool_name, call.tool_input) == (
        "PermissionRequest",
        "Bash",
        {"command": "npm install express"},
    )
    assert call.body["host_tool_name"] == "execute_bash"
    assert (call.session_id, call.cwd) == ("kiro-4242", "/home/alice/shop"), "Kiro names no session: its process"
    assert read("pre_tool_use_shell", tool_name="shell").tool_name == "Bash", "Kiro 3's name for it"
    assert read("pre_tool_use_shell", session_id="s-1").session_id == "s-1", "a session Kiro names is kept"


def test_kiros_mcp_tool_asks_the_team_under_claude_codes_name_for_it() -> None:
    call = read("pre_tool_use_mcp")
    assert (call.event, call.tool_name, call.tool_input) == (
        "PermissionRequest",
        "mcp__github__create_issue",
        {"title": "Flaky build"},
    )


def test_kiros_reads_and_writes_are_decided_by_rules_alone_in_claude_codes_words() -> None:
    write = read("pre_tool_use_write")
    assert (write.event, write.tool_name) == ("PreToolUse", "Edit")
    assert write.tool_input == {"file_path": "/home/alice/shop/.env", "old_string": "DEBUG=0", "new_string": "DEBUG=1"}
    created = read("pre_tool_use_write", tool_input={"command": "create", "path": "/tmp/a.py", "file_text": "x = 1"})
    assert (created.tool_name, created.tool_input) == ("Write", {"file_path": "/tmp/a.py", "content": "x = 1"})
    reading = read("pre_tool_use_read")
    assert (reading.event, reading.tool_name, reading.tool_input) == (
        "PreToolUse",
        "Read",
        {"file_path": "/home/alice/shop/.env"},
    )


def test_kiros_other_events_make_the_timeline_in_both_its_spellings() -> None:
    assert read("agent_spawn").event == "SessionStart", "Kiro 2's agentSpawn"
    assert read("agent_spawn", hook_event_name="SessionStart").event == "SessionStart"
    assert read("user_prompt_submit").event == "UserPromptSubmit"
    assert read("stop").event == "Stop"
    after = read("post_tool_use")
    assert (after.event, after.tool_name) == ("PostToolUse", "Bash")


def test_a_body_that_is_not_json_is_passed_on_for_the_endpoint_to_refuse() -> None:
    assert KIRO.read_hook("not json", HOOKED) == "not json"


@pytest.mark.parametrize(
    ("decision", "told"),
    [
        ({"behavior": "allow"}, ("", "", 0)),
        ({"behavior": "deny", "message": "Not today"}, ("", "Not today\n", 2)),
        (
            {"behavior": "allow", "updatedInput": {"command": "ls"}},
            ("", "Hook Bridge: the team allowed this only as edited; run this instead: ls\n", 2),
        ),
    ],
)
def test_kiro_is_told_by_exit_code_2_and_stderr_and_can_only_block(
    decision: dict[str, Any], told: tuple[str, str, int]
) -> None:
    assert KIRO.deliver(KIRO.answer("PermissionRequest", {"hookSpecificOutput": {"decision": decision}})) == told


def test_nobody_deciding_goes_on_to_kiros_own_prompt_and_headless_blocks() -> None:
    body = fixture("pre_tool_use_shell")
    assert KIRO.deliver(KIRO.no_decision(body, why="down")) == ("", "", 0)
    refused = KIRO.deliver(KIRO.no_decision(body, refuse="Hook Bridge: down; not run."))
    assert refused == ("", "Hook Bridge: down; not run.\n", 2)
    rule = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "No .env"}}
    assert KIRO.deliver(KIRO.answer("PreToolUse", rule)) == ("", "No .env\n", 2), "a rule's deny of a write blocks"


def test_hook_bridges_own_tools_need_nobody_and_another_servers_are_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOKBRIDGE_TOKEN", "hb_x")
    down = "http://127.0.0.1:9"
    args = ["kiro", "--url", down, "--mcp-server", "hookbridge", "--timeout", "5"]
    own = json.dumps({**fixture("pre_tool_use_mcp"), "tool_name": "@hookbridge/ask_question"})
    out, err = StringIO(), StringIO()
    assert hook_client.main(args, StringIO(own), out, stderr=err) == 0
    assert (out.getvalue(), err.getvalue()) == ("", ""), "allowed at once, without the server"
    other = json.dumps(fixture("pre_tool_use_mcp"))
    out, err = StringIO(), StringIO()
    assert hook_client.main([*args, "--undecided", "deny"], StringIO(other), out, stderr=err) == 2
    assert "cannot reach Hook Bridge" in err.getvalue(), "asked like any tool, refused headless with the server down"


def test_register_kiro_writes_its_hooks_beside_the_persons_and_unregister_gives_the_file_back(
    tmp_path: Path, db: None
) -> None:
    hooks_file = tmp_path / "hookbridge.json"
    mine = {
        "name": "lint",
        "trigger": "PostFileSave",
        "matcher": "\\.ts$",
        "action": {"type": "command", "command": "npm run lint"},
    }
    own = json.dumps({"version": "v1", "hooks": [mine]}, indent=2) + "\n"
    hooks_file.write_text(own)
    said = run("register", "kiro", "--hooks-file", str(hooks_file), "--url", "http://127.0.0.1:8123", "--token", "hb_x")
    assert "export HOOKBRIDGE_TOKEN=hb_x" in said
    written = json.loads(hooks_file.read_text())
    assert written["hooks"][0] == mine
    ours = {hook["trigger"]: hook for hook in written["hooks"][1:]}
    assert set(ours) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}
    command = ours["PreToolUse"]["action"]["command"]
    assert command.endswith(" hook kiro --url http://127.0.0.1:8123 --mcp-server hookbridge")
    assert (ours["PreToolUse"]["timeout"], ours["PreToolUse"]["matcher"]) == (600, ".*"), "a person takes minutes"
    run("register", "kiro", "--hooks-file", str(hooks_file), "--url", "http://127.0.0.1:8123", "--token", "hb_x")
    assert len(json.loads(hooks_file.read_text())["hooks"]) == 6, "twice: nothing doubles"
    assert "Removed hooks (SessionStart" in run("unregister", "kiro", "--hooks-file", str(hooks_file))
    assert hooks_file.read_text() == own
    with pytest.raises(CommandError, match="nothing of Hook Bridge's is in"):
        run("unregister", "kiro", "--hooks-file", str(hooks_file))


def test_register_kiro_for_a_project_makes_its_own_file_and_unregister_removes_it(tmp_path: Path, db: None) -> None:
    run("register", "kiro", "--project", str(tmp_path), "--url", "http://h:1", "--token", "hb_x", "--headless")
    path = tmp_path / ".kiro" / "hooks" / "hookbridge.json"
    hooks = json.loads(path.read_text())["hooks"]
    assert all(hook["action"]["command"].endswith(" --undecided deny") for hook in hooks), "headless: nobody refuses"
    run("unregister", "kiro", "--project", str(tmp_path))
    assert not path.exists()


def test_a_hook_file_whose_hooks_are_not_a_list_is_left_alone(tmp_path: Path, db: None) -> None:
    hooks_file = tmp_path / "hookbridge.json"
    hooks_file.write_text('{"hooks": {"PreToolUse": []}}')
    with pytest.raises(CommandError, match=r"'hooks' in .* is not a list; refusing to touch it"):
        run("register", "kiro", "--hooks-file", str(hooks_file), "--url", "http://h:1", "--token", "hb_x")
    assert hooks_file.read_text() == '{"hooks": {"PreToolUse": []}}'
