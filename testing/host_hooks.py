"""`hookbridge hook HOST` run as an agent host runs it (its hook's JSON on stdin, the answer read from stdout),
and what the server made of it: the tests of every host's hooks share these."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from testing.live import ROOT, LiveServer

FIXTURES = ROOT / "tests" / "fixtures"


def fixture_body(host: str, event: str, **changes: Any) -> dict[str, Any]:
    """A hook body the host sent in a real run (tests/fixtures/<host>_hooks/<event>.json), with `changes`."""
    found: dict[str, Any] = json.loads((FIXTURES / f"{host}_hooks" / f"{event}.json").read_text())
    return {**found, **changes}


async def run_hook(
    server: LiveServer | None,
    host: str,
    sent: dict[str, Any],
    *,
    url: str | None = None,
    token: str | None = None,
    extra: tuple[str, ...] = (),
    data_dir: Path | None = None,
) -> tuple[int, str, str]:
    """`hookbridge hook <host>`: (exit code, stdout, stderr). `data_dir`: the Hook Bridge data folder it sees (its
    local login's token); by default an empty one, so a tester's own local token never stands in."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("HOOKBRIDGE_")}
    env["HOOKBRIDGE_DATA_DIR"] = str(data_dir or Path(tempfile.mkdtemp(prefix="hookbridge-no-data-")))
    if token is None and server is not None:
        token = server.tokens["agent-a"]
    if token:
        env["HOOKBRIDGE_TOKEN"] = token
    target = url or (server.url if server is not None else "")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hookbridge_site.cli", "hook", host, "--url", target, *extra,
        cwd=ROOT, env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(json.dumps(sent).encode()), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def pending_approval(server: LiveServer, command: str, timeout: float = 30) -> dict[str, Any]:
    """The pending approval of the shell command `command`, once it is up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for question in await server.questions("pending"):
            if question["kind"] == "approval" and question["payload"]["tool_input"].get("command") == command:
                return question
        await asyncio.sleep(0.1)
    raise AssertionError(f"no approval for {command!r}; server log:\n{server.log()[-3000:]}")


async def card_left(server: LiveServer, question_id: str, timeout: float = 30) -> dict[str, Any] | None:
    """The question `question_id` once it is no longer pending (its card has left), or None after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = next(q for q in await server.questions() if q["id"] == question_id)
        if found["status"] != "pending":
            return found
        await asyncio.sleep(0.25)
    return None


async def message_on_page(server: LiveServer, session: str, text: str) -> None:
    """A person's message to the agent of `session`, sent from its session page."""
    async with server.login() as http:
        sent = await http.post(f"/sessions/{session}/messages", data={"text": text}, headers={"HX-Request": "true"})
    assert sent.status_code == 200, sent.text


def session_facts(server: LiveServer, guid: str) -> tuple[str, str, list[str]]:
    """(name, host, event types in order) of the session `guid`, as the server stored it."""
    said = server.manage(
        "shell", "-c",
        "import json, uuid; from lifecycle.models import AgentSession; "
        f"s = AgentSession.objects.get(guid=uuid.UUID('{guid}')); "
        "print(json.dumps([s.name, s.host, [e.type for e in s.events.order_by('created_at')]]))",
    )  # fmt: skip
    name, host, types = json.loads(said.strip().splitlines()[-1])
    return name, host, types


def add_rule(server: LiveServer, tool: str, input_pattern: str, action: str, message: str) -> None:
    server.manage(
        "shell", "-c",
        "from approvals.models import ApprovalRule; ApprovalRule.objects.create("
        f"tool_pattern={tool!r}, input_pattern={input_pattern!r}, action={action!r}, message={message!r}, position=1)",
    )  # fmt: skip


def drop_rules(server: LiveServer) -> None:
    server.manage("shell", "-c", "from approvals.models import ApprovalRule; ApprovalRule.objects.all().delete()")
