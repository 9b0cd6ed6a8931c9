"""Issue 53's world for tests against a running server: the shop project, its people, and the issue's policy file."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

from testing.live import LiveServer

# The policy file issue 53 gives as its example (and its "done when" applies).
ISSUE_POLICY = """\
project: shop
rules:
  - allow: {tool: Bash, command_prefix: "npm test"}
  - deny: {tool: Bash, command_prefix: "git push --force", message: "Never force-push; open a pull request"}
approvals:
  - name: pushes need two
    match: {tool: Bash, command_prefix: "git push"}
    quorum: 2
    self_approval: false
    escalate: [{after: 5m, notify: "on-call:backend"}, {after: 15m, notify: admins}]
    timeout: 30m
    fallback: deny
"""

# A second policy for the fallback: nobody decides a release within three seconds, so the policy denies it.
RELEASES = """\
  - name: releases time out
    match: {tool: Bash, command_prefix: "make release"}
    quorum: 2
    timeout: 3s
    fallback: deny
"""

# Run in the server's `manage.py shell`: pat, ann and bob answer in shop, each with an answer token of their own;
# pat's agent asks with a token pat owns. Prints the raw tokens as JSON (pat, ann, bob, agent).
SHOP_PEOPLE = """
import json
from django.contrib.auth.models import User
from projects.models import Project
from tokens.models import AgentToken, Scope
shop = Project.objects.create(name="shop")
raw = {}
for name in ("pat", "ann", "bob"):
    person = User.objects.create_user(name)
    shop.set_member(person, "answerer")
    raw[name] = AgentToken.issue(name + "-answers", scope=Scope.ANSWER, project=shop, user=person)[1]
raw["agent"] = AgentToken.issue("pat-agent", project=shop, user=User.objects.get(username="pat"))[1]
print(json.dumps(raw))
"""


def shop_with_policy(server: LiveServer, folder: Path, policy: str = ISSUE_POLICY) -> dict[str, str]:
    """The shop world on `server`, `policy` applied with `manage.py policy apply`; the raw tokens by name."""
    raw: dict[str, str] = json.loads(server.manage("shell", "-c", SHOP_PEOPLE).strip().splitlines()[-1])
    path = folder / "shop.yaml"
    path.write_text(policy)
    applied = server.manage("policy", "apply", str(path))
    assert "Applied" in applied, applied
    return raw


async def pending_for(
    server: LiveServer, raw: str, command: str, timeout: float = 60, shows: Callable[[], str] | None = None
) -> dict[str, Any]:
    """The pending approval of the shell command `command` as the person whose answer token is `raw` sees it (the
    harness's answer bot sees another project); `shows`: what to say when none comes (a terminal's screen)."""
    deadline = time.monotonic() + timeout
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw}"}, timeout=60) as http:
        while time.monotonic() < deadline:
            for question in (await http.get(f"{server.url}/api/questions?status=pending")).json()["questions"]:
                if question["kind"] == "approval" and question["payload"]["tool_input"].get("command") == command:
                    return dict(question)
            await asyncio.sleep(0.1)
    said = shows() if shows is not None else server.log()[-3000:]
    raise AssertionError(f"no approval for {command!r}:\n{said}")
