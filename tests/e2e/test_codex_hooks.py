"""Codex's hooks through `hookbridge hook codex` (issue 41), against a real daphne process: the command as Codex
runs it, fed the bodies Codex 0.171 sent in a real run of its TUI (tests/fixtures/codex_hooks, paths
rewritten), reading the answer Codex parses from its stdout."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing import host_hooks
from testing.host_hooks import add_rule, drop_rules, fixture_body, pending_approval, session_facts
from testing.live import LiveServer, free_port, serving


def body(event: str, **changes: Any) -> dict[str, Any]:
    """A real Codex hook body, in a session of its own unless told."""
    return fixture_body("codex", event, **{"session_id": str(uuid.uuid4()), **changes})


def shell(command: str, **changes: Any) -> dict[str, Any]:
    return body("PermissionRequest", tool_input={"command": command, "description": "Needs the network"}, **changes)


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


async def run_hook(server: LiveServer | None, sent: dict[str, Any], **options: Any) -> tuple[int, str, str]:
    """`hookbridge hook codex` run as Codex runs it: (exit code, stdout, stderr)."""
    return await host_hooks.run_hook(server, "codex", sent, **options)


def decision(out: str) -> dict[str, Any]:
    said = json.loads(out)["hookSpecificOutput"]
    assert said["hookEventName"] == "PermissionRequest"
    found: dict[str, Any] = said["decision"]
    return found


async def test_a_shell_command_waits_for_the_team_and_a_deny_reaches_codex_with_its_reason(server: LiveServer) -> None:
    hook = asyncio.create_task(run_hook(server, shell("npm publish")))
    approval = await pending_approval(server, "npm publish")
    assert approval["payload"]["tool_name"] == "Bash"
    assert approval["payload"]["host_title"] == "Codex"
    async with server.login() as browser:
        page = (await browser.get(f"/questions/{approval['id']}/")).text
    assert "Codex in /home/alice/shop" in page, "the card names the host (its session's name)"
    assert not hook.done(), "held until a person decides"
    assert (await server.answer_via_api(approval["id"], {"behavior": "deny", "message": "Not on a Friday"})).is_success
    code, out, err = await asyncio.wait_for(hook, 30)
    assert code == 0, err
    assert decision(out) == {"behavior": "deny", "message": "Not on a Friday"}
    assert out.count("\n") == 1, "one JSON line on stdout, nothing else"
    async with server.login() as browser:
        history = (await browser.get("/history/", params={"q": "npm publish"})).text
        exported = (await browser.get("/history/", params={"q": "npm publish", "format": "csv"})).text
    assert "in Codex" in history, "history names the host"
    header, line = exported.splitlines()[:2]
    assert dict(zip(header.split(","), line.split(","), strict=False))["host"] == "Codex"


async def test_an_allow_reaches_codex_and_an_edited_command_is_refused_naming_the_edit(server: LiveServer) -> None:
    for answer, expected in (
        ({"behavior": "allow"}, {"behavior": "allow"}),
        (
            {"behavior": "allow", "updatedInput": {"command": "npm test -- --ci"}},
            {"behavior": "deny",
             "message": "Hook Bridge: the team allowed this only as edited; run this instead: npm test -- --ci"},
        ),
    ):  # fmt: skip
        command = f"npm test # {uuid.uuid4().hex[:6]}"
        hook = asyncio.create_task(run_hook(server, shell(command)))
        approval = await pending_approval(server, command)
        assert (await server.answer_via_api(approval["id"], answer)).status_code == 200
        code, out, _ = await asyncio.wait_for(hook, 30)
        assert (code, decision(out)) == (0, expected)


async def test_a_team_rule_on_bash_decides_codexs_commands_whether_or_not_codex_would_ask(server: LiveServer) -> None:
    add_rule(server, "Bash", "^git push --force", "deny", "No force pushes")
    add_rule(server, "Bash", "^make test", "allow", "")
    await asyncio.sleep(1.2)  # the server re-reads rules a second after its last read
    try:
        # PreToolUse comes before every command, asked or not: a deny rule stops it there.
        pre = body("PreToolUse", tool_input={"command": "git push --force origin"})
        code, out, _ = await run_hook(server, pre)
        said = json.loads(out)["hookSpecificOutput"]
        assert (code, said["permissionDecision"], said["permissionDecisionReason"]) == (0, "deny", "No force pushes")
        code, out, _ = await run_hook(server, shell("make test"))
        assert (code, decision(out)) == (0, {"behavior": "allow"})
        code, out, _ = await run_hook(server, body("PreToolUse", tool_input={"command": "make test"}))
        assert (code, json.loads(out)) == (0, {}), "an allow rule at PreToolUse leaves Codex to its own policy"
        await asyncio.sleep(0.5)
        decided = [
            q for q in await server.questions() if q["payload"].get("tool_input", {}).get("command") == "make test"
        ]
        assert [q["status"] for q in decided] == ["answered"], "decided by the rule, no card"
        assert decided[0]["answer"]["answeredBy"].startswith("rule #")
    finally:
        drop_rules(server)
        await asyncio.sleep(1.2)


@pytest.mark.parametrize("undecided", ["ask", "deny"])
async def test_with_the_server_down_codex_asks_at_its_own_prompt_or_refuses_and_says_why(
    server: LiveServer, undecided: str
) -> None:
    code, out, err = await run_hook(
        None,
        shell("make deploy"),
        url=f"http://127.0.0.1:{free_port()}",
        token="hb_whatever",
        extra=("--undecided", undecided),
    )
    assert code == 0
    assert "cannot reach Hook Bridge at http://127.0.0.1:" in err
    assert err.count("\n") == 1
    if undecided == "ask":
        assert json.loads(out) == {}, "no decision: Codex shows its own approval prompt, never a silent allow"
        assert err.endswith("; Codex asks at its own prompt\n")
    else:
        assert decision(out)["behavior"] == "deny"
        assert "cannot reach Hook Bridge" in decision(out)["message"]


async def test_codexs_session_prompt_tool_use_and_stop_become_one_session_timeline(server: LiveServer) -> None:
    session = str(uuid.uuid4())
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"):
        code, out, err = await run_hook(server, body(event, session_id=session))
        assert (code, json.loads(out)) == (0, {}), err
    name, host, types = session_facts(server, session)
    assert (name, host) == ("Codex in /home/alice/shop", "codex")
    assert "prompt" in types
    assert "tool" in types


async def test_a_message_from_the_session_page_reaches_codexs_model_once_after_its_next_tool(
    server: LiveServer,
) -> None:
    session = str(uuid.uuid4())
    code, _, err = await run_hook(server, body("UserPromptSubmit", session_id=session))
    assert code == 0, err
    async with server.login() as http:
        sent = await http.post(
            f"/sessions/{session}/messages", data={"text": "Use pnpm, not npm"}, headers={"HX-Request": "true"}
        )
    assert sent.status_code == 200, sent.text
    _, out, _ = await run_hook(server, body("PostToolUse", session_id=session))
    context = json.loads(out)["hookSpecificOutput"]
    assert context == {"hookEventName": "PostToolUse", "additionalContext": context["additionalContext"]}
    assert "Use pnpm, not npm" in context["additionalContext"]
    _, again, _ = await run_hook(server, body("PostToolUse", session_id=session))
    assert json.loads(again) == {}, "handed over once"


async def test_claude_code_may_run_the_same_command_as_a_command_hook(server: LiveServer) -> None:
    # Where a team's settings allow only command hooks: the answer is Claude Code's own, as over HTTP.
    sent = fixture_body("claude_code", "PermissionRequest", session_id=str(uuid.uuid4()))
    sent["tool_input"] = {"command": f"make lint # {uuid.uuid4().hex[:6]}"}
    hook = asyncio.create_task(host_hooks.run_hook(server, "claude-code", sent))
    approval = await pending_approval(server, sent["tool_input"]["command"])
    assert approval["payload"]["host_title"] == "Claude Code"
    assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
    code, out, err = await asyncio.wait_for(hook, 30)
    assert (code, json.loads(out)) == (
        0, {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}},
    ), err  # fmt: skip


async def test_without_hookbridge_token_the_hook_sends_the_local_logins_token(
    server: LiveServer, tmp_path: Path
) -> None:
    # `hookbridge serve` on a laptop keeps its login and agent token in the data folder: hooks need no export.
    (tmp_path / "local-credentials.json").write_text(json.dumps({"username": "me", "token": server.tokens["agent-a"]}))
    command = f"make docs # {uuid.uuid4().hex[:6]}"
    hook = asyncio.create_task(run_hook(server, shell(command), token="", data_dir=tmp_path))
    approval = await pending_approval(server, command)
    assert approval["asker"] == "agent-a"
    assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
    code, out, err = await asyncio.wait_for(hook, 30)
    assert (code, decision(out)) == (0, {"behavior": "allow"}), err
