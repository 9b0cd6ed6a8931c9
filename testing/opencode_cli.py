"""The real OpenCode (tests/opencode_cli, from npm) run offline: its Anthropic provider pointed at the scripted
model Claude Code's tests use (testing.model_stand_in), in a config folder of its own that asks before every
shell command, as a team that wants approvals sets it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from testing.claude_cli import Model
from testing.live import ROOT

OPENCODE = ROOT / "tests" / "opencode_cli" / "node_modules" / ".bin" / "opencode"
# The plugin SDK OpenCode installs into its config folder at its first start, installed once (make opencode-deps).
PLUGIN_SDK = ROOT / "tests" / "opencode_cli" / "plugin_sdk"


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
    if (PLUGIN_SDK / "node_modules").is_dir():
        # As OpenCode leaves the folder after its first start: it finds its SDK there and installs nothing.
        # Linked, not copied: 64 MB a test otherwise; OpenCode only reads them.
        shutil.copytree(PLUGIN_SDK / "node_modules", folder / "node_modules", symlinks=True, copy_function=os.link)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(PLUGIN_SDK / name, folder / name)
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
            # Offline: its bundled list of models, without first trying models.dev for seconds.
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
        }
    )
    return env
