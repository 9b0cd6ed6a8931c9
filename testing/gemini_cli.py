"""The real Gemini CLI (tests/gemini_cli, from npm) run offline: the scripted Gemini API it talks to
(testing.gemini_stand_in) and the home that keeps a tester's own ~/.gemini out of it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from testing.claude_cli import Model, stand_in
from testing.live import ROOT, free_port

GEMINI = ROOT / "tests" / "gemini_cli" / "node_modules" / ".bin" / "gemini"


class GeminiModel(Model):
    def heard(self, needle: str) -> bool:
        """Whether any request to the model held `needle` (what a tool said, or why it was blocked)."""
        return any(needle in json.dumps(request.get("contents", []), ensure_ascii=False) for request in self.requests())


@contextmanager
def scripted_gemini(command: str, folder: Path) -> Iterator[GeminiModel]:
    """The stand-in Gemini API, scripted to run `command`, on a free port until the block ends."""
    found = GeminiModel(free_port(), folder / "gemini-requests.jsonl")
    with stand_in("testing.gemini_stand_in", found, command):
        yield found


def gemini_home(home: Path) -> Path:
    """A home whose Gemini CLI signs in with an API key (the stand-in takes any); its settings file."""
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}, indent=2) + "\n")
    return settings


def gemini_env(model: GeminiModel, home: Path, token: str) -> dict[str, str]:
    env = {key: os.environ[key] for key in ("PATH", "LANG") if key in os.environ}
    env.update(
        {
            "HOME": str(home),
            "GEMINI_API_KEY": "stand-in",
            "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{model.port}",
            # A folder the CLI has never seen is untrusted, and an untrusted folder runs no hooks.
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "HOOKBRIDGE_TOKEN": token,
        }
    )
    return env
