"""Cursor's and Cline's hooks through `hookbridge hook cursor|cline` (issue 58), against a real daphne process: the
command as each host runs it, fed the bodies of their hook references (tests/fixtures/cursor_hooks,
tests/fixtures/cline_hooks), reading the answer each host parses from its stdout.

Neither host's agent runs here (Cursor's does not install from the registries; Cline's CLI needs a signed-in
provider for its model): the fixtures stand in for them, and the tables in docs/hosts.md say so."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from testing import host_hooks
from testing.host_hooks import add_rule, drop_rules, fixture_body, message_on_page, pending_approval, session_facts
from testing.live import LiveServer, free_port, serving


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


def cursor(event: str, **changes: Any) -> dict[str, Any]:
    return fixture_body("cursor", event, **{"conversation_id": str(uuid.uuid4()), **changes})


def cline(name: str, command: str | None = None, **changes: Any) -> dict[str, Any]:
    body = fixture_body("cline", name, **{"taskId": uuid.uuid4().hex, **changes})
    if command is not None:
        body["tool_call"] = {**body["tool_call"], "input": {"command": command, "requires_approval": True}}
        body["preToolUse"] = {**body["preToolUse"], "parameters": {"command": command, "requires_approval": "true"}}
    return body


async def test_cursors_shell_command_waits_for_the_team_and_a_deny_reaches_it_with_the_reason_for_the_model(
    server: LiveServer,
) -> None:
    command = f"rm -rf dist # {uuid.uuid4().hex[:6]}"
    hook = asyncio.create_task(host_hooks.run_hook(server, "cursor", cursor("beforeShellExecution", command=command)))
    approval = await pending_approval(server, command)
    assert approval["payload"]["tool_name"] == "Bash", "a shell command is a shell command, whichever host"
    assert approval["payload"]["host_title"] == "Cursor"
    async with server.login() as browser:
        page = (await browser.get(f"/questions/{approval['id']}/")).text
    assert "Cursor in /home/alice/shop" in page, "the card names the host"
    assert not hook.done(), "held until a person decides"
    decision = {"behavior": "deny", "message": "Not the dist folder"}
    assert (await server.answer_via_api(approval["id"], decision)).status_code == 200
    code, out, err = await asyncio.wait_for(hook, 30)
    assert code == 0, err
    assert json.loads(out) == {
        "permission": "deny",
        "user_message": "Hook Bridge: Not the dist folder",
        "agent_message": "Not the dist folder",
    }


async def test_cursor_gets_its_allow_and_an_edit_is_refused_naming_the_edit(server: LiveServer) -> None:
    for decision, expected in (
        ({"behavior": "allow"}, {"permission": "allow"}),
        (
            {"behavior": "allow", "updatedInput": {"command": "npm ci"}},
            {
                "permission": "deny",
                "user_message": "Hook Bridge: the team allowed this only as edited; run this instead: npm ci",
                "agent_message": "Hook Bridge: the team allowed this only as edited; run this instead: npm ci",
            },
        ),
    ):  # fmt: skip
        command = f"npm install # {uuid.uuid4().hex[:6]}"
        hook = asyncio.create_task(
            host_hooks.run_hook(server, "cursor", cursor("beforeShellExecution", command=command))
        )
        approval = await pending_approval(server, command)
        assert (await server.answer_via_api(approval["id"], decision)).status_code == 200
        code, out, _ = await asyncio.wait_for(hook, 30)
        assert (code, json.loads(out)) == (0, expected)


async def test_a_team_rule_decides_cursors_reads_and_shell_commands_without_a_card(server: LiveServer) -> None:
    add_rule(server, "Read", r"\.env", "deny", "No secrets")
    add_rule(server, "Bash", "^git push --force", "deny", "No force pushes")
    await asyncio.sleep(1.2)  # the server re-reads rules a second after its last read
    try:
        code, out, _ = await host_hooks.run_hook(server, "cursor", cursor("beforeReadFile"))
        assert (code, json.loads(out)) == (
            0,
            {"permission": "deny", "user_message": "Hook Bridge: No secrets", "agent_message": "No secrets"},
        )
        sent = cursor("beforeShellExecution", command="git push --force origin")
        code, out, _ = await host_hooks.run_hook(server, "cursor", sent)
        assert json.loads(out)["permission"] == "deny"
        code, out, _ = await host_hooks.run_hook(server, "cursor", cursor("beforeReadFile", file_path="/s/README.md"))
        assert json.loads(out) == {"permission": "allow"}, "a read no rule denies goes on, with nobody asked"
        reads = [q for q in await server.questions() if q["payload"].get("tool_name") == "Read"]
        assert all("API_KEY" not in json.dumps(q) for q in reads), "the file's content is never kept"
    finally:
        drop_rules(server)
        await asyncio.sleep(1.2)


async def test_without_the_team_cursor_asks_at_its_own_prompt_and_says_why_there(server: LiveServer) -> None:
    sent = cursor("beforeShellExecution", command="make deploy")
    code, out, err = await host_hooks.run_hook(None, "cursor", sent, url=f"http://127.0.0.1:{free_port()}", token="x")
    assert code == 0
    answer = json.loads(out)
    assert answer["permission"] == "ask", "never a silent allow"
    assert "cannot reach Hook Bridge at http://127.0.0.1:" in answer["user_message"], "the reason where Cursor shows it"
    assert err.endswith("; Cursor asks at its own prompt\n")


async def test_cursors_own_mcp_tool_calls_to_hook_bridge_need_nobodys_permission(server: LiveServer) -> None:
    sent = cursor("beforeMCPExecution", tool_name="ask_question", url=f"{server.url}/mcp")
    code, out, _ = await host_hooks.run_hook(server, "cursor", sent)
    assert (code, json.loads(out)) == (0, {"permission": "allow"})
    assert not [q for q in await server.questions("pending") if q["payload"].get("tool_name") == "ask_question"]


async def test_cursors_session_becomes_one_timeline_and_a_message_is_handed_over_at_stop(server: LiveServer) -> None:
    conversation = str(uuid.uuid4())
    for event in ("beforeSubmitPrompt", "afterShellExecution", "afterFileEdit"):
        code, out, err = await host_hooks.run_hook(server, "cursor", cursor(event, conversation_id=conversation))
        assert code == 0, err
    name, host, types = session_facts(server, conversation)
    assert (name, host) == ("Cursor in /home/alice/shop", "cursor")
    assert "prompt" in types
    assert "tool" in types
    await message_on_page(server, conversation, "Also update the README")
    code, out, _ = await host_hooks.run_hook(server, "cursor", cursor("stop", conversation_id=conversation))
    assert json.loads(out) == {"followup_message": "alice (on Hook Bridge) says: Also update the README"}
    code, out, _ = await host_hooks.run_hook(server, "cursor", cursor("stop", conversation_id=conversation))
    assert json.loads(out) == {}, "handed over once"


async def test_clines_tool_call_waits_for_the_team_and_a_deny_cancels_it_with_the_reason(server: LiveServer) -> None:
    command = f"rm -rf build # {uuid.uuid4().hex[:6]}"
    hook = asyncio.create_task(host_hooks.run_hook(server, "cline", cline("tool_call", command)))
    approval = await pending_approval(server, command)
    assert approval["payload"]["tool_name"] == "Bash"
    assert approval["payload"]["host_tool_name"] == "execute_command"
    assert approval["payload"]["host_title"] == "Cline"
    assert not hook.done(), "held until a person decides"
    decision = {"behavior": "deny", "message": "Not the build folder"}
    assert (await server.answer_via_api(approval["id"], decision)).status_code == 200
    code, out, err = await asyncio.wait_for(hook, 30)
    assert code == 0, err
    assert json.loads(out) == {"cancel": True, "errorMessage": "Not the build folder"}


async def test_cline_gets_its_allow_as_cancel_false_in_the_references_shape_too(server: LiveServer) -> None:
    command = f"npm test # {uuid.uuid4().hex[:6]}"
    sent = cline("tool_call", command)
    del sent["tool_call"]  # the hook reference's shape alone: parameters as strings
    hook = asyncio.create_task(host_hooks.run_hook(server, "cline", sent))
    approval = await pending_approval(server, command)
    assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
    code, out, _ = await asyncio.wait_for(hook, 30)
    assert (code, json.loads(out)) == (0, {"cancel": False})


async def test_a_rule_reads_each_of_clines_several_commands_in_one_call(server: LiveServer) -> None:
    add_rule(server, "Bash", r"curl .*\| *sh", "deny", "No piping the internet into a shell")
    await asyncio.sleep(1.2)
    try:
        code, out, _ = await host_hooks.run_hook(server, "cline", cline("tool_call_run_commands"))
        assert (code, json.loads(out)) == (0, {"cancel": True, "errorMessage": "No piping the internet into a shell"})
    finally:
        drop_rules(server)
        await asyncio.sleep(1.2)


async def test_cline_without_the_team_refuses_the_call_saying_why(server: LiveServer) -> None:
    # Cline's CLI approves every tool itself: a hook that said nothing would let the tool run.
    down = f"http://127.0.0.1:{free_port()}"
    code, out, err = await host_hooks.run_hook(None, "cline", cline("tool_call", "make deploy"), url=down, token="x")
    refused = json.loads(out)
    assert (code, refused["cancel"]) == (0, True)
    assert "cannot reach Hook Bridge" in refused["errorMessage"]
    assert err.endswith("; refused\n")


async def test_clines_task_becomes_one_timeline_and_a_message_is_handed_over_after_a_tool(server: LiveServer) -> None:
    task = uuid.uuid4().hex
    for name in ("agent_start", "prompt_submit"):
        code, out, err = await host_hooks.run_hook(server, "cline", cline(name, taskId=task))
        assert (code, json.loads(out)) == (0, {}), err
    guid = str(uuid.UUID(task))
    await message_on_page(server, guid, "Skip the e2e suite")
    code, out, _ = await host_hooks.run_hook(server, "cline", cline("tool_result", taskId=task))
    assert json.loads(out) == {
        "cancel": False,
        "contextModification": "alice (on Hook Bridge) says: Skip the e2e suite",
    }
    code, out, _ = await host_hooks.run_hook(server, "cline", cline("agent_end", taskId=task))
    assert json.loads(out) == {}
    name, host, types = session_facts(server, guid)
    assert (name, host) == ("Cline in /home/alice/shop", "cline")
    assert types.index("stop") > types.index("tool")


async def test_windsurfs_command_waits_for_the_team_and_a_deny_blocks_it_with_the_reason(server: LiveServer) -> None:
    for decision, expected in (
        ({"behavior": "deny", "message": "Not in production"}, (2, "", "Not in production\n")),
        ({"behavior": "allow"}, (0, "", "")),
    ):
        command = f"make deploy # {uuid.uuid4().hex[:6]}"
        sent = fixture_body("windsurf", "pre_run_command", trajectory_id=str(uuid.uuid4()))
        sent["tool_info"] = {"command_line": command, "cwd": "/home/alice/shop"}
        hook = asyncio.create_task(host_hooks.run_hook(server, "windsurf", sent))
        approval = await pending_approval(server, command)
        assert (approval["payload"]["host_title"], approval["payload"]["tool_name"]) == ("Windsurf", "Bash")
        assert (await server.answer_via_api(approval["id"], decision)).status_code == 200
        assert await asyncio.wait_for(hook, 30) == expected


async def test_kiros_command_waits_for_the_team_and_a_deny_blocks_it_with_the_reason_for_the_model(
    server: LiveServer,
) -> None:
    for decision, expected in (
        ({"behavior": "deny", "message": "Not in production"}, (2, "", "Not in production\n")),
        ({"behavior": "allow"}, (0, "", "")),
    ):
        command = f"make deploy # {uuid.uuid4().hex[:6]}"
        sent = fixture_body("kiro", "pre_tool_use_shell", tool_input={"command": command})
        hook = asyncio.create_task(host_hooks.run_hook(server, "kiro", sent))
        approval = await pending_approval(server, command)
        assert (approval["payload"]["host_title"], approval["payload"]["tool_name"]) == ("Kiro CLI", "Bash")
        assert (await server.answer_via_api(approval["id"], decision)).status_code == 200
        assert await asyncio.wait_for(hook, 30) == expected


async def test_a_team_rule_blocks_kiros_write_to_a_secret_with_nobody_asked(server: LiveServer) -> None:
    add_rule(server, "Edit", r"\.env", "deny", "No secrets")
    await asyncio.sleep(1.2)  # the server re-reads rules a second after its last read
    try:
        code, out, err = await host_hooks.run_hook(server, "kiro", fixture_body("kiro", "pre_tool_use_write"))
        assert (code, out, err) == (2, "", "No secrets\n")
        kept = [q for q in await server.questions() if q["payload"].get("host_title") == "Kiro CLI"]
        edits = [q for q in kept if q["payload"]["tool_name"] == "Edit"]
        assert [(q["status"], q["answer"]["answeredBy"][:6]) for q in edits] == [("answered", "rule #")], "no card"
    finally:
        drop_rules(server)
        await asyncio.sleep(1.2)
