"""GitHub Copilot CLI's hooks through `hookbridge hook copilot` (issue 41), against a real daphne process: the
command as Copilot CLI runs it, fed the bodies Copilot CLI 1.0.102 sent in a real run (tests/fixtures/
copilot_hooks, paths rewritten), reading the answer Copilot CLI parses from its stdout."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from testing import host_hooks
from testing.host_hooks import fixture_body, pending_approval, session_facts
from testing.live import LiveServer, free_port, serving


def body(event: str, session: str | None = None, **changes: Any) -> dict[str, Any]:
    """A real Copilot CLI hook body, in a session of its own unless told (permissionRequest's is camelCase)."""
    key = "sessionId" if event == "PermissionRequest" else "session_id"
    return fixture_body("copilot", event, **{key: session or str(uuid.uuid4()), **changes})


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


async def run_hook(server: LiveServer | None, sent: dict[str, Any], **options: Any) -> tuple[int, str, str]:
    return await host_hooks.run_hook(server, "copilot", sent, **options)


async def test_a_shell_command_waits_for_the_team_and_a_deny_reaches_copilot_with_its_reason(
    server: LiveServer,
) -> None:
    hook = asyncio.create_task(run_hook(server, body("PermissionRequest", toolInput={"command": "npm publish"})))
    approval = await pending_approval(server, "npm publish")
    assert (approval["payload"]["tool_name"], approval["payload"]["host_tool_name"]) == ("Bash", "bash")
    async with server.login() as browser:
        page = (await browser.get(f"/questions/{approval['id']}/")).text
    assert "Copilot CLI in /home/alice/shop" in page
    assert (await server.answer_via_api(approval["id"], {"behavior": "deny", "message": "Not on a Friday"})).is_success
    code, out, err = await asyncio.wait_for(hook, 30)
    assert (code, json.loads(out)) == (0, {"behavior": "deny", "message": "Not on a Friday"}), err


async def test_hook_bridges_own_tools_are_allowed_without_asking_and_no_other_servers_are() -> None:
    down = f"http://127.0.0.1:{free_port()}"
    own = body("PermissionRequest", toolName="hookbridge/ask_question", toolInput={"question": "Which region?"})
    code, out, err = await run_hook(None, own, url=down, token="hb_x", extra=("--mcp-server", "hookbridge"))
    assert (code, json.loads(out), err) == (0, {"behavior": "allow"}, "")
    other = body("PermissionRequest", toolName="github/create_issue", toolInput={"title": "x"})
    code, out, err = await run_hook(None, other, url=down, token="hb_x", extra=("--mcp-server", "hookbridge"))
    assert (code, json.loads(out)) == (0, {}), "asked like any tool: here the server is down, so no decision"
    assert "cannot reach Hook Bridge" in err


async def test_with_the_server_down_copilot_is_left_to_its_own_permission_flow_and_told_why(
    server: LiveServer,
) -> None:
    sent = body("PermissionRequest")
    code, out, err = await run_hook(None, sent, url=f"http://127.0.0.1:{free_port()}", token="hb_x")
    assert (code, json.loads(out)) == (0, {}), "never a silent allow"
    assert err.startswith("hookbridge hook copilot: cannot reach Hook Bridge at http://127.0.0.1:")
    code, out, _ = await run_hook(
        None, sent, url=f"http://127.0.0.1:{free_port()}", token="hb_x", extra=("--undecided", "deny")
    )
    assert json.loads(out)["behavior"] == "deny"


async def test_copilots_session_prompt_tool_use_and_stop_become_one_session_timeline(server: LiveServer) -> None:
    session = str(uuid.uuid4())
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"):
        code, out, err = await run_hook(server, body(event, session))
        assert (code, json.loads(out)) == (0, {}), err
    name, host, types = session_facts(server, session)
    assert (name, host) == ("Copilot CLI in /home/alice/shop", "copilot")
    assert "prompt" in types
    assert "tool" in types


async def test_a_message_waits_past_copilots_tool_use_and_is_handed_over_when_it_stops(server: LiveServer) -> None:
    # Copilot CLI reads nothing a command hook answers to postToolUse: handed there, it would be lost.
    session = str(uuid.uuid4())
    await run_hook(server, body("UserPromptSubmit", session))
    async with server.login() as http:
        sent = await http.post(
            f"/sessions/{session}/messages", data={"text": "Use pnpm, not npm"}, headers={"HX-Request": "true"}
        )
    assert sent.status_code == 200, sent.text
    _, out, _ = await run_hook(server, body("PostToolUse", session))
    assert json.loads(out) == {}
    _, out, _ = await run_hook(server, body("Stop", session))
    said = json.loads(out)
    assert said["decision"] == "block", "Copilot CLI takes another turn with the reason as its prompt"
    assert "Use pnpm, not npm" in said["reason"]
    _, again, _ = await run_hook(server, body("Stop", session, stop_hook_active=True))
    assert json.loads(again) == {}, "handed over once"
