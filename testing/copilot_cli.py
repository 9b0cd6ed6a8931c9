"""The real GitHub Copilot CLI (tests/copilot_cli, from npm) run offline: its own-model mode (BYOK, Anthropic's
API) pointed at the scripted model Claude Code's tests use (testing.model_stand_in), with
COPILOT_OFFLINE=true, so it never reaches GitHub, and a home of its own."""

from __future__ import annotations

import json
import os
from pathlib import Path

from testing.claude_cli import Model
from testing.live import ROOT

COPILOT = ROOT / "tests" / "copilot_cli" / "node_modules" / ".bin" / "copilot"


def heard(model: Model, needle: str) -> bool:
    """Whether any request to the model held `needle` (what a tool said, or why it was refused)."""
    return any(needle in json.dumps(request.get("messages", []), ensure_ascii=False) for request in model.requests())


def copilot_env(model: Model, home: Path, token: str) -> dict[str, str]:
    env = {key: os.environ[key] for key in ("PATH", "LANG") if key in os.environ}
    env.update(
        {
            "HOME": str(home),
            "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{model.port}",
            "COPILOT_PROVIDER_API_KEY": "sk-stand-in",
            "COPILOT_MODEL": "claude-sonnet-4-5",
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "HOOKBRIDGE_TOKEN": token,
        }
    )
    return env
