"""The real Codex CLI (tests/codex_cli, from npm) run offline: the scripted Responses API it talks to
(testing.codex_stand_in) and a Codex home of its own, set up as a person's is after `hookbridge register codex`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from testing.claude_cli import Model, stand_in
from testing.live import ROOT, free_port

CODEX = ROOT / "tests" / "codex_cli" / "node_modules" / ".bin" / "codex"


class CodexModel(Model):
    def heard(self, needle: str) -> bool:
        """Whether any request to the model held `needle` (what a tool said, or why it was refused)."""
        return any(needle in json.dumps(request.get("input", []), ensure_ascii=False) for request in self.requests())


@contextmanager
def scripted_codex(command: str, folder: Path) -> Iterator[CodexModel]:
    """The stand-in Responses API, scripted to run `command`, on a free port until the block ends."""
    found = CodexModel(free_port(), folder / "codex-requests.jsonl")
    with stand_in("testing.codex_stand_in", found, command):
        yield found


def codex_home(home: Path, model: CodexModel) -> Path:
    """~/.codex holding a config for the stand-in model: a person's own settings, before Hook Bridge's.

    on-request: Codex asks before a command that needs more than its sandbox (the stand-in's commands ask to
    leave it), which is when a PermissionRequest hook runs; `codex exec` never asks."""
    folder = home / ".codex"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text(
        'model = "gpt-5-codex"\n'
        'model_provider = "stand-in"\n'
        'approval_policy = "on-request"\n'
        'sandbox_mode = "workspace-write"\n'
        "check_for_update_on_startup = false\n"
        "\n"
        "[model_providers.stand-in]\n"
        'name = "Stand-in"\n'
        f'base_url = "http://127.0.0.1:{model.port}/v1"\n'
        'wire_api = "responses"\n'
    )
    return folder


def codex_env(home: Path, token: str) -> dict[str, str]:
    env = {key: os.environ[key] for key in ("PATH", "LANG") if key in os.environ}
    # The terminal is tmux's whatever the suite was started from (CI may have no TERM at all).
    env.update({"HOME": str(home), "CODEX_HOME": str(home / ".codex"), "HOOKBRIDGE_TOKEN": token})
    env["TERM"] = "screen-256color"
    return env
