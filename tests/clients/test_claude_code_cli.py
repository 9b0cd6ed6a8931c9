"""The real Claude Code CLI (2.1.331, from npm) against a real daphne process, offline.

The model API is testing/model_stand_in.py: it answers the CLI's first request with a Bash tool
use and its second with what the tool said, so each run is one tool use that needs permission.
The hooks block is the one `register_claude --hooks` writes, the token comes from the
environment as the README says, and the person is a bot on the JSON API or a team rule.

`make test` installs the CLI into tests/claude_code (npm ci); without it these tests skip.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from testing.claude_cli import CLAUDE, MODEL, Model, cli_env, scripted_model
from testing.live import LiveServer, free_port, serving

pytestmark = [
    pytest.mark.skipif(not CLAUDE.exists(), reason="the Claude Code CLI is not installed (make claude-code-deps)"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    """A worker of this module's own: its team rules must not decide another module's approvals."""
    yield from serving()


@pytest.fixture
def model(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Model]:
    """The stand-in model, scripted to ask for the Bash command the test names with @pytest.mark.parametrize."""
    with scripted_model(request.param, tmp_path) as found:
        yield found


async def run_cli(project: Path, env: dict[str, str], *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        str(CLAUDE),
        "-p",
        "make hi.txt",
        "--model",
        MODEL,
        *args,
        cwd=project,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )


async def finished(process: asyncio.subprocess.Process, timeout: float = 60) -> str:
    out, _ = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode == 0, out.decode(errors="replace")
    return out.decode(errors="replace")


async def pending_approval(server: LiveServer, command: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for question in await server.questions("pending"):
            if question["kind"] == "approval" and question["payload"]["tool_input"].get("command") == command:
                return question
        await asyncio.sleep(0.1)
    raise AssertionError(f"no approval for {command!r} appeared; server log:\n{server.log()[-3000:]}")


def registered_project(server: LiveServer, tmp_path: Path) -> Path:
    project = tmp_path / "shop"
    project.mkdir()
    server.manage(
        "register",
        "claude-code",
        "--hooks",
        "--project",
        str(project),
        "--url",
        server.url,
        "--token",
        server.tokens["agent-a"],
    )
    return project


COMMAND = "echo made > hi.txt && cat hi.txt"


@pytest.mark.parametrize("model", [COMMAND], indirect=True)
async def test_the_cli_waits_for_a_person_runs_their_edit_and_hears_a_message(
    server: LiveServer, model: Model, tmp_path: Path
) -> None:
    project = registered_project(server, tmp_path)
    sid = str(uuid.uuid4())
    settings_text = (project / ".claude" / "settings.local.json").read_text()
    # The host fills the header from its environment (allowedEnvVars); the token is never in the file.
    assert "Bearer $HOOKBRIDGE_TOKEN" in settings_text
    assert server.tokens["agent-a"] not in settings_text

    cli = await run_cli(project, cli_env(model, tmp_path / "home", server.tokens["agent-a"]), "--session-id", sid)
    approval = await pending_approval(server, COMMAND)
    assert approval["session"] == sid
    assert approval["payload"]["event"] == "PermissionRequest"
    assert approval["payload"]["cwd"] == str(project)
    assert not (project / "hi.txt").exists()  # held: nothing ran yet

    async with server.login() as http:
        sent = await http.post(f"/sessions/{sid}/messages", data={"text": "Use pnpm, not npm"})
    assert sent.status_code in (200, 302), sent.text
    edited = "echo edited > hi.txt && cat hi.txt"
    answered = await server.answer_via_api(approval["id"], {"behavior": "allow", "updatedInput": {"command": edited}})
    assert answered.status_code == 200, answered.text

    out = await finished(cli)
    assert "The tool said: edited" in out
    assert (project / "hi.txt").read_text() == "edited\n"
    # The message reached the model after the tool use (PostToolUse's additionalContext), once.
    later = json.dumps(model.requests()[1:])
    assert later.count("alice (on Hook Bridge) says: Use pnpm, not npm") == 1
    async with httpx2.AsyncClient(headers=server.auth(), timeout=60) as http:
        session = (await http.get(f"{server.url}/api/sessions/{sid}")).json()
    assert (session["name"], session["state"]) == (f"Claude Code in {project}", "closed")


@pytest.mark.parametrize("model", ["rm -rf build"], indirect=True)
async def test_a_team_rule_refuses_the_command_before_anyone_is_asked(
    server: LiveServer, model: Model, tmp_path: Path
) -> None:
    server.manage(
        "shell",
        "-c",
        "from approvals.models import ApprovalRule; "
        "ApprovalRule.objects.create(tool_pattern='Bash', input_pattern='rm -rf', action='deny', "
        "message='Run make clean instead')",
    )
    try:
        project = registered_project(server, tmp_path)
        (project / "build").mkdir()
        sid = str(uuid.uuid4())
        cli = await run_cli(project, cli_env(model, tmp_path / "home", server.tokens["agent-a"]), "--session-id", sid)
        out = await finished(cli)
    finally:
        server.manage("shell", "-c", "from approvals.models import ApprovalRule; ApprovalRule.objects.all().delete()")
    assert "Run make clean instead" in out
    assert (project / "build").is_dir()
    decided = [q for q in await server.questions() if q["session"] == sid and q["kind"] == "approval"]
    assert [(q["status"], q["answer"]["answeredBy"][:6]) for q in decided] == [("answered", "rule #")]


DOWN = "echo unasked > hi.txt && cat hi.txt"


@pytest.mark.parametrize("model", [DOWN], indirect=True)
async def test_with_the_server_down_the_cli_keeps_its_own_permission_flow_and_runs_nothing_unasked(
    server: LiveServer, model: Model, tmp_path: Path
) -> None:
    project = tmp_path / "offline"
    project.mkdir()
    # The hooks `register_claude --hooks` writes, pointed at a port nobody listens on: the server is down.
    server.manage(
        "register", "claude-code", "--hooks", "--project", str(project),
        "--url", f"http://127.0.0.1:{free_port()}", "--token", server.tokens["agent-a"],
    )  # fmt: skip
    cli = await run_cli(project, cli_env(model, tmp_path / "home", server.tokens["agent-a"]))
    out = await finished(cli)
    # A failed HTTP hook decides nothing: the CLI's own permission flow does, and headless, with nobody at its
    # prompt and no rule allowing Bash, that is a refusal the model hears.
    assert not (project / "hi.txt").exists()
    heard = json.dumps(model.requests()[1:])
    assert '"is_error": true' in heard, heard[-2000:]
    assert "The tool said (error)" in out
    assert "needs approval" in out, out  # Claude Code's own words for its own prompt


HEADLESS = "echo headless > hi.txt && cat hi.txt"


@pytest.mark.parametrize("model", [HEADLESS], indirect=True)
@pytest.mark.parametrize(
    ("decision", "said"),
    [
        ({"behavior": "deny", "message": "Not on a Friday"}, "The tool said (error): Not on a Friday"),
        ({"behavior": "allow", "updatedInput": {"command": "echo changed"}}, "The tool said: changed"),
    ],
)
async def test_a_headless_run_asks_through_the_permission_prompt_tool(
    server: LiveServer, model: Model, tmp_path: Path, decision: dict[str, Any], said: str
) -> None:
    project = tmp_path / "ci-job"
    project.mkdir()
    config = {
        "mcpServers": {
            "hookbridge": {
                "type": "http",
                "url": f"{server.url}/mcp/approvals",
                "headers": {"Authorization": f"Bearer {server.tokens['agent-a']}"},
            }
        }
    }
    cli = await run_cli(
        project,
        cli_env(model, tmp_path / "home", server.tokens["agent-a"]),
        "--mcp-config",
        json.dumps(config),
        "--strict-mcp-config",
        "--permission-prompt-tool",
        "mcp__hookbridge__approve",
    )
    approval = await pending_approval(server, HEADLESS)
    assert approval["payload"]["event"] == "permission-prompt-tool"
    answered = await server.answer_via_api(approval["id"], decision)
    assert answered.status_code == 200, answered.text
    out = await finished(cli)
    assert said in out
    assert (project / "hi.txt").exists() is False  # neither the denied command nor the edit writes it
