"""The real OpenCode (tests/opencode_cli, from npm) run offline: its Anthropic provider pointed at the scripted
model Claude Code's tests use (testing.model_stand_in), in a config folder of its own that asks before every
shell command, as a team that wants approvals sets it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from testing.claude_cli import Model
from testing.live import ROOT

OPENCODE = ROOT / "tests" / "opencode_cli" / "node_modules" / ".bin" / "opencode"


def opencode_config(home: Path, model: Model) -> Path:
    """~/.config/opencode with the person's own opencode.json, before Hook Bridge's; the folder."""
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True)
    config = {
        "model": "anthropic/claude-sonnet-4-5",
        "autoupdate": False,
        "share": "disabled",
        "permission": {"bash": "ask", "edit": "ask"},
        "provider": {
            "anthropic": {"options": {"baseURL": f"http://127.0.0.1:{model.port}/v1", "apiKey": "sk-stand-in"}}
        },
    }
    (folder / "opencode.json").write_text(json.dumps(config, indent=2) + "\n")
    return folder


def opencode_env(home: Path, token: str) -> dict[str, str]:
    env = {key: os.environ[key] for key in ("PATH", "LANG") if key in os.environ}
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "HOOKBRIDGE_TOKEN": token,
            # The terminal is tmux's whatever the suite was started from (CI may have no TERM at all).
            "TERM": "screen-256color",
        }
    )
    return env
