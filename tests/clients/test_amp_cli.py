"""The real Amp CLI (0.0.1790142911, from npm) against a real daphne process, offline (issue 58).

`amp permissions test TOOL --ARG value` evaluates Amp's permission rules exactly as Amp does before a tool call,
running a `delegate` rule's program as it runs it (the arguments as JSON on stdin, the tool's name in
AGENT_TOOL_NAME, the decision read from the exit code and stderr), and needs no sign-in: so the rules and the
script `register amp` writes are tested with Amp itself deciding what they mean.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing.host_hooks import add_rule, drop_rules, pending_approval
from testing.live import ROOT, LiveServer, free_port, serving

AMP = ROOT / "tests" / "amp_cli" / "node_modules" / ".bin" / "amp"

pytestmark = [
    pytest.mark.skipif(not AMP.exists(), reason="the Amp CLI is not installed (make amp-deps)"),
    pytest.mark.timeout(300),
]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving()


def registered(server: LiveServer, home: Path, url: str | None = None, *extra: str) -> Path:
    """A home whose Amp settings `register amp` wrote, as a person runs it; the settings file."""
    settings = home / ".config" / "amp" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"amp.permissions": [{"tool": "Read", "action": "allow"}]}, indent=2) + "\n")
    said = server.manage(
        "register", "amp", "--settings-file", str(settings), "--url", url or server.url,
        "--token", server.tokens["agent-a"], *extra,
    )  # fmt: skip
    assert "delegated to" in said
    return settings


async def amp_decides(home: Path, tool: str, *arguments: str, token: str) -> tuple[int, dict[str, Any]]:
    """What Amp decides for one call of `tool`, as `amp permissions test --json` reports it, and its exit code."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("HOOKBRIDGE_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), HOOKBRIDGE_TOKEN=token)
    process = await asyncio.create_subprocess_exec(
        str(AMP), "permissions", "test", tool, *arguments, "--json",
        cwd=home, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    start = out.decode().find("{")
    assert start >= 0, f"no JSON from amp: {out.decode()!r} {err.decode()!r}"
    found: dict[str, Any] = json.loads(out.decode()[start:])
    return process.returncode, found


async def test_amps_shell_command_waits_for_the_team_and_a_deny_reaches_the_model_with_its_reason(
    server: LiveServer, tmp_path: Path
) -> None:
    registered(server, tmp_path)
    command = "rm -rf build # deny me"
    deciding = asyncio.create_task(amp_decides(tmp_path, "Bash", "--cmd", command, token=server.tokens["agent-a"]))
    approval = await pending_approval(server, command, timeout=90)
    assert approval["payload"]["host_title"] == "Amp"
    assert approval["payload"]["tool_name"] == "Bash"
    assert not deciding.done(), "Amp waits on its delegate while a person decides"
    decision = {"behavior": "deny", "message": "Not the build folder"}
    assert (await server.answer_via_api(approval["id"], decision)).status_code == 200
    code, said = await deciding
    assert (code, said["action"]) == (2, "reject")
    assert said["error"].strip() == "Not the build folder"


async def test_amp_runs_an_edit_the_team_allows(server: LiveServer, tmp_path: Path) -> None:
    registered(server, tmp_path)
    edit = ("--path", "src/app.ts", "--old_str", "3000", "--new_str", "8080")
    deciding = asyncio.create_task(amp_decides(tmp_path, "edit_file", *edit, token=server.tokens["agent-a"]))
    approval = None
    for _ in range(600):
        pending = [q for q in await server.questions("pending") if q["payload"].get("host_tool_name") == "edit_file"]
        if pending:
            approval = pending[0]
            break
        await asyncio.sleep(0.1)
    assert approval is not None, "an edit asks the team"
    assert approval["payload"]["tool_name"] == "Edit"
    assert approval["payload"]["tool_input"] == {"file_path": "src/app.ts", "old_string": "3000", "new_string": "8080"}
    assert (await server.answer_via_api(approval["id"], {"behavior": "allow"})).status_code == 200
    code, said = await deciding
    assert (code, said["action"]) == (0, "allow")


async def test_a_team_rule_decides_for_amp_with_no_card(server: LiveServer, tmp_path: Path) -> None:
    registered(server, tmp_path)
    add_rule(server, "Bash", "^git push --force", "deny", "No force pushes")
    await asyncio.sleep(1.2)  # the server re-reads rules a second after its last read
    try:
        code, said = await amp_decides(tmp_path, "Bash", "--cmd", "git push --force", token=server.tokens["agent-a"])
        assert (code, said["action"], said["error"].strip()) == (2, "reject", "No force pushes")
    finally:
        drop_rules(server)
        await asyncio.sleep(1.2)


async def test_with_the_server_down_amp_asks_its_own_person_or_refuses_when_headless(
    server: LiveServer, tmp_path: Path
) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    registered(server, tmp_path / "asking", down)
    code, said = await amp_decides(tmp_path / "asking", "Bash", "--cmd", "make deploy", token="hb_x")
    assert (code, said["action"]) == (1, "ask"), "never a silent allow: Amp asks at its own prompt"
    registered(server, tmp_path / "headless", down, "--headless")
    code, said = await amp_decides(tmp_path / "headless", "Bash", "--cmd", "make deploy", token="hb_x")
    assert (code, said["action"]) == (2, "reject")
    assert "cannot reach Hook Bridge" in said["error"]


async def test_unregister_leaves_the_persons_own_rules_and_amp_decides_as_before(
    server: LiveServer, tmp_path: Path
) -> None:
    settings = registered(server, tmp_path)
    server.manage("unregister", "amp", "--settings-file", str(settings))
    assert json.loads(settings.read_text()) == {"amp.permissions": [{"tool": "Read", "action": "allow"}]}
    assert not (settings.parent / "hookbridge-delegate").exists()
    _, said = await amp_decides(tmp_path, "Bash", "--cmd", "rm -rf build", token="hb_x")
    assert said["action"] != "delegate"
    assert "delegate" not in json.dumps(said.get("matchedEntry", {}))
