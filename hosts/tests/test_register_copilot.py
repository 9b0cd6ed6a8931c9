"""register copilot and unregister copilot on a Copilot CLI home with the person's own settings (issue 41)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from hosts import copilot

URL = "http://127.0.0.1:8123"
OWN_SETTINGS: dict[str, Any] = {
    "theme": "github",
    "hooks": {"PreToolUse": [{"type": "command", "bash": "./policy.sh", "timeoutSec": 10}]},
}
OWN_MCP: dict[str, Any] = {"mcpServers": {"docs": {"type": "http", "url": "https://docs.example/mcp"}}}


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / ".copilot"
    folder.mkdir()
    (folder / "settings.json").write_text(json.dumps(OWN_SETTINGS, indent=2) + "\n")
    (folder / "mcp-config.json").write_text(json.dumps(OWN_MCP) + "\n")
    return folder


def test_it_writes_its_hooks_and_mcp_server_beside_the_persons_own_and_unregister_gives_both_back(
    home: Path, db: None
) -> None:
    before = {name: (home / name).read_bytes() for name in ("settings.json", "mcp-config.json")}
    said = run("register", "copilot", "--copilot-home", str(home), "--url", URL)
    assert "export HOOKBRIDGE_TOKEN=hb_" in said
    settings = json.loads((home / "settings.json").read_text())
    assert settings["theme"] == "github"
    assert set(settings["hooks"]) == set(copilot.EVENTS)
    own, ours = settings["hooks"]["PreToolUse"]
    assert own == OWN_SETTINGS["hooks"]["PreToolUse"][0]
    assert ours["bash"].endswith(f" hook copilot --url {URL} --mcp-server hookbridge")
    assert ours["timeoutSec"] == 600, "Copilot CLI's own default, 30 s, is less than a person takes"
    servers = json.loads((home / "mcp-config.json").read_text())["mcpServers"]
    assert servers["docs"] == OWN_MCP["mcpServers"]["docs"]
    assert servers["hookbridge"]["headers"] == {"Authorization": "Bearer ${HOOKBRIDGE_TOKEN}"}
    assert "hb_" not in (home / "settings.json").read_text() + (home / "mcp-config.json").read_text()
    run("register", "copilot", "--copilot-home", str(home), "--url", URL, "--token", "hb_x")
    assert len(json.loads((home / "settings.json").read_text())["hooks"]["Stop"]) == 1, "nothing doubles"
    run("unregister", "copilot", "--copilot-home", str(home))
    assert {name: (home / name).read_bytes() for name in before} == before


def test_files_that_were_not_there_are_gone_again_and_a_second_unregister_says_so(tmp_path: Path, db: None) -> None:
    home = tmp_path / ".copilot"
    run("register", "copilot", "--copilot-home", str(home), "--url", URL, "--token", "hb_x")
    run("unregister", "copilot", "--copilot-home", str(home))
    assert list(home.iterdir()) == []
    with pytest.raises(CommandError, match="nothing of Hook Bridge's is in"):
        run("unregister", "copilot", "--copilot-home", str(home))


def test_settings_that_are_not_json_are_refused_and_left_alone(home: Path) -> None:
    (home / "settings.json").write_text("{theme: github")
    with pytest.raises(CommandError, match="is not valid JSON"):
        run("register", "copilot", "--copilot-home", str(home), "--url", URL, "--token", "hb_x")
    assert (home / "settings.json").read_text() == "{theme: github"
    assert json.loads((home / "mcp-config.json").read_text()) == OWN_MCP
