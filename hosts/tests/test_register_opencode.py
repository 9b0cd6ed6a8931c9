"""register opencode and unregister opencode on an OpenCode config folder with the person's own settings (issue 41)."""

from __future__ import annotations

import json
import shutil
import subprocess
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from hosts import opencode

URL = "http://127.0.0.1:8123"
OWN: dict[str, Any] = {
    "model": "anthropic/claude-sonnet-4-5",
    "mcp": {"docs": {"type": "remote", "url": "https://docs.example/mcp"}},
}


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = tmp_path / "opencode"
    made.mkdir()
    (made / "opencode.json").write_text(json.dumps(OWN, indent=2) + "\n")
    return made


def test_it_writes_its_plugin_and_mcp_server_and_unregister_gives_the_folder_back(folder: Path, db: None) -> None:
    before = (folder / "opencode.json").read_bytes()
    said = run("register", "opencode", "--config-dir", str(folder), "--url", URL)
    assert "export HOOKBRIDGE_TOKEN=hb_" in said
    plugin = folder / "plugin" / "hookbridge.js"
    assert f'"{URL}/hooks/opencode"' in plugin.read_text()
    config = json.loads((folder / "opencode.json").read_text())
    assert config["mcp"]["docs"] == OWN["mcp"]["docs"]
    assert config["mcp"]["hookbridge"]["headers"] == {"Authorization": "Bearer {env:HOOKBRIDGE_TOKEN}"}
    assert "hb_" not in (folder / "opencode.json").read_text() + plugin.read_text()
    run("unregister", "opencode", "--config-dir", str(folder))
    assert (folder / "opencode.json").read_bytes() == before
    assert not (folder / "plugin").exists()


@pytest.mark.skipif(shutil.which("node") is None, reason="node checks the plugin's syntax")
def test_the_plugin_is_a_module_node_can_read(tmp_path: Path) -> None:
    module = tmp_path / "hookbridge.mjs"
    module.write_text(opencode.plugin_text('http://127.0.0.1:8000/"quoted"'))
    checked = subprocess.run(["node", "--check", str(module)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_a_plugin_of_the_same_name_that_is_not_ours_is_left_alone(folder: Path, db: None) -> None:
    (folder / "plugin").mkdir()
    (folder / "plugin" / "hookbridge.js").write_text("export const Mine = async () => ({})\n")
    with pytest.raises(CommandError, match="is not Hook Bridge's; refusing to overwrite it"):
        run("register", "opencode", "--config-dir", str(folder), "--url", URL, "--token", "hb_x")
    assert json.loads((folder / "opencode.json").read_text()) == OWN
    with pytest.raises(CommandError, match="nothing of Hook Bridge's is in"):
        run("unregister", "opencode", "--config-dir", str(folder))
