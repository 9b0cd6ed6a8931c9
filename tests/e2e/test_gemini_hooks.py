"""Gemini CLI's hooks through `hookbridge hook gemini` (issue 41), against a real daphne process: the command
as Gemini CLI runs it, fed the bodies Gemini CLI 0.61 sent in a real run (tests/fixtures/gemini_hooks, paths
rewritten), reading the answer Gemini CLI parses from its stdout."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing import host_hooks
from testing.host_hooks import add_rule, drop_rules, fixture_body, message_on_page, pending_approval, session_facts
from testing.live import LiveServer, free_port, serving


def body(event: str, **changes: Any) -> dict[str, Any]:
    """A real Gemini CLI hook body, in a session of its own unless told."""
    return fixture_body("gemini", event, **{"session_id": str(uuid.uuid4()), **changes})


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


async def run_hook(
    server: LiveServer | None, sent: dict[str, Any], *, url: str | None = None, token: str | None = None
) -> tuple[int, str, str]:
    """`hookbridge hook gemini` run as Gemini CLI runs it: (exit code, stdout, stderr)."""
    return await host_hooks.run_hook(server, "gemini", sent, url=url, token=token)


async def test_a_shell_command_waits_for_the_team_and_a_deny_reaches_gemini_with_its_reason(
    server: LiveServer,
) -> None:
    sent = body("BeforeTool", tool_input={"command": "rm -rf build", "description": "Clean"})
    hook = asyncio.create_task(run_hook(server, sent))
    approval = await pending_approval(server, "rm -rf build")
    assert approval["payload"]["tool_name"] == "Bash", "a shell command is a shell command, whichever host"
    assert approval["payload"]["host_tool_name"] == "run_shell_command"
    assert approval["payload"]["host_title"] == "Gemini CLI"
    async with server.login() as browser:
        page = (await browser.get(f"/questions/{approval['id']}/")).text
    assert "Gemini CLI in /home/alice/shop" in page, "the card names the host (its session's name)"
    assert "Claude Code" not in page
    assert not hook.done(), "held until a person decides"
    decision = {"behavior": "deny", "message": "Not the build folder"}
    assert (await server.answer_via_api(approval["id"], decision)).status_code == 200
    code, out, err = await asyncio.wait_for(hook, 30)
    assert code == 0, err
    assert json.loads(out) == {"decision": "deny", "reason": "Not the build folder"}
    assert out.count("\n") == 1, "one JSON line on stdout, nothing else"


async def test_an_allow_and_an_edited_command_reach_gemini_as_its_own_allow(server: LiveServer) -> None:
    for decision, expected in (
        ({"behavior": "allow"}, {"decision": "allow"}),
        (
            {"behavior": "allow", "updatedInput": {"command": "npm test -- --ci"}},
            {
                "decision": "allow",
                "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"command": "npm test -- --ci"}},
            },
        ),
    ):  # fmt: skip
        command = f"npm test # {uuid.uuid4().hex[:6]}"
        hook = asyncio.create_task(run_hook(server, body("BeforeTool", tool_input={"command": command})))
        approval = await pending_approval(server, command)
        assert (await server.answer_via_api(approval["id"], decision)).status_code == 200
        code, out, _ = await asyncio.wait_for(hook, 30)
        assert (code, json.loads(out)) == (0, expected)


async def test_a_team_rule_for_bash_decides_geminis_shell_command_without_a_card(server: LiveServer) -> None:
    add_rule(server, "Bash", "^git push --force", "deny", "No force pushes")
    await asyncio.sleep(1.2)  # the server re-reads rules a second after its last read
    try:
        code, out, _ = await run_hook(server, body("BeforeTool", tool_input={"command": "git push --force origin"}))
        assert (code, json.loads(out)) == (0, {"decision": "deny", "reason": "No force pushes"})
        await asyncio.sleep(0.5)
        decided = [
            q
            for q in await server.questions()
            if q["payload"].get("tool_input", {}).get("command") == "git push --force origin"
        ]
        assert [q["status"] for q in decided] == ["answered"]
        assert decided[0]["answer"]["answeredBy"].startswith("rule #")
    finally:
        drop_rules(server)
        await asyncio.sleep(1.2)


@pytest.mark.parametrize("trouble", ["server down", "no token", "a refused token"])
async def test_without_the_team_gemini_is_told_to_ask_at_its_own_prompt_and_why_on_stderr(
    server: LiveServer, trouble: str
) -> None:
    sent = body("BeforeTool", tool_input={"command": "make deploy"})
    if trouble == "server down":
        code, out, err = await run_hook(None, sent, url=f"http://127.0.0.1:{free_port()}", token="hb_whatever")
        assert "cannot reach Hook Bridge at http://127.0.0.1:" in err
    elif trouble == "no token":
        code, out, err = await run_hook(server, sent, token="")
        assert "HOOKBRIDGE_TOKEN is not set" in err
    else:
        code, out, err = await run_hook(server, sent, token="hb_not_a_token")
        assert "the server refused the hook (401: a valid agent token is required" in err
    assert code == 0
    answer = json.loads(out)
    assert answer["decision"] == "ask", "never a silent allow: Gemini CLI asks at its own prompt"
    assert err.count("\n") == 1
    assert err.endswith("; Gemini CLI asks at its own prompt\n")


async def test_geminis_session_prompt_and_tool_use_become_one_session_timeline(server: LiveServer) -> None:
    session = str(uuid.uuid4())
    for event in ("SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"):
        code, out, err = await run_hook(server, body(event, session_id=session))
        assert (code, json.loads(out)) == (0, {}), err
    name, host, types = session_facts(server, session)
    assert name == "Gemini CLI in /home/alice/shop"
    assert host == "gemini"
    assert "prompt" in types
    assert "tool" in types
    assert types.index("stop") > types.index("tool"), "AfterAgent is the turn's end, as Claude Code's Stop"
    async with server.login() as browser:
        page = (await browser.get(f"/sessions/{session}/")).text
    assert "Output: (empty)" in page, "the turn's last words (AfterAgent's prompt_response) are on the timeline"


def test_register_gemini_writes_its_hooks_and_mcp_server_and_unregister_gives_the_file_back(
    server: LiveServer, tmp_path: Path
) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    own_hook = {"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh"}]}
    before = json.dumps({"theme": "Dracula", "hooks": {"BeforeTool": [own_hook]}}, indent=4) + "\n"
    settings.write_text(before)
    said = server.manage("register", "gemini", "--project", str(tmp_path), "--url", server.url)
    assert f"in {settings}" in said
    assert "export HOOKBRIDGE_TOKEN=hb_" in said
    written = json.loads(settings.read_text())
    ours = written["hooks"]["BeforeTool"][-1]
    assert ours["matcher"] == "run_shell_command|write_file|replace"
    assert ours["hooks"][0]["command"].endswith(f" hook gemini --url {server.url}")
    assert ours["hooks"][0]["timeout"] == 600_000
    assert written["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "./lint.sh", "the person's own hook stays"
    assert set(written["hooks"]) == {
        "BeforeTool",
        "AfterTool",
        "BeforeAgent",
        "AfterAgent",
        "SessionStart",
        "SessionEnd",
    }
    assert "matcher" not in written["hooks"]["AfterAgent"][0], "every turn's end, whatever tool it ran"
    assert written["mcpServers"]["hookbridge"] == {
        "httpUrl": f"{server.url}/mcp", "headers": {"Authorization": "Bearer $HOOKBRIDGE_TOKEN"}, "trust": True,
    }  # fmt: skip
    assert "hb_" not in settings.read_text(), "the token is never in the file"
    server.manage("register", "gemini", "--project", str(tmp_path), "--url", server.url, "--token", "hb_x")
    assert json.loads(settings.read_text()) == written, "a second register adds nothing"
    server.manage("unregister", "gemini", "--project", str(tmp_path), "--url", server.url)
    assert settings.read_text() == before


async def test_a_message_from_the_session_page_reaches_geminis_model_after_its_next_tool_once(
    server: LiveServer,
) -> None:
    session = str(uuid.uuid4())
    code, _, err = await run_hook(server, body("BeforeAgent", session_id=session))
    assert code == 0, err
    await message_on_page(server, session, "Use pnpm, not npm")
    _, out, _ = await run_hook(server, body("AfterTool", session_id=session))
    context = json.loads(out)["hookSpecificOutput"]
    assert context["hookEventName"] == "AfterTool"
    assert "Use pnpm, not npm" in context["additionalContext"]
    _, again, _ = await run_hook(server, body("AfterTool", session_id=session))
    assert json.loads(again) == {}, "handed over once"


async def test_a_message_from_the_session_page_reaches_geminis_model_when_its_turn_ends_once(
    server: LiveServer,
) -> None:
    session = str(uuid.uuid4())
    code, _, err = await run_hook(server, body("BeforeAgent", session_id=session))
    assert code == 0, err
    await message_on_page(server, session, "Tag the release too")
    _, out, _ = await run_hook(server, body("AfterAgent", session_id=session, stop_hook_active=True))
    assert json.loads(out) == {}, "a turn that is already a hook's continuation is let end: it would loop"
    _, out, _ = await run_hook(server, body("AfterAgent", session_id=session))
    answer = json.loads(out)
    assert answer["decision"] == "block", "Gemini CLI sends the reason to its model as the next prompt"
    assert "Tag the release too" in answer["reason"]
    assert set(answer) == {"decision", "reason"}
    _, again, _ = await run_hook(server, body("AfterAgent", session_id=session))
    assert json.loads(again) == {}, "handed over once"
