"""Claude Code's hook bodies as captured (tests/fixtures/claude_code_hooks), and posting one as the host does."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx2

from testing.live import LiveServer

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "claude_code_hooks"


def permission_request(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((FIXTURES / "PermissionRequest.json").read_text())
    body["session_id"] = str(uuid.uuid4())
    body.update(changes)
    return body


async def hook(server: LiveServer, body: dict[str, Any]) -> httpx2.Response:
    async with httpx2.AsyncClient(headers=server.auth(), timeout=60) as http:
        return await http.post(f"{server.url}/hooks/claude", json=body)
