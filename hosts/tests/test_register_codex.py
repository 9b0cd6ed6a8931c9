"""register codex and unregister codex on a Codex home with the person's own hooks and config (issue 41)."""

from __future__ import annotations

import json
import tomllib
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from hosts import codex
from tokens.models import AgentToken

URL = "http://127.0.0.1:8123"
OWN_HOOKS: dict[str, Any] = {
    "hooks": {"PreToolUse": [{"matcher": "^Bash$", "hooks": [{"type": "command", "command": "./policy.sh"}]}]}
}
OWN_CONFIG = (
    'model = "gpt-5-codex"\napproval_policy = "on-request"\n\n[mcp_servers.docs]\nurl = "https://docs.example/mcp"\n'
)


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / ".codex"
    folder.mkdir()
    (folder / "hooks.json").write_text(json.dumps(OWN_HOOKS, indent=2) + "\n")
    (folder / "config.toml").write_text(OWN_CONFIG)
    return folder


def test_it_writes_the_hooks_their_trust_and_the_mcp_server_beside_the_persons_own(home: Path, db: None) -> None:
    said = run("register", "codex", "--codex-home", str(home), "--url", URL)
    hooks = json.loads((home / "hooks.json").read_text())
    assert set(hooks["hooks"]) == set(codex.EVENTS)
    own, ours = hooks["hooks"]["PreToolUse"]
    assert own == OWN_HOOKS["hooks"]["PreToolUse"][0], "the person's own hook stays first"
    assert "matcher" not in ours, "every tool"
    assert ours["hooks"][0]["command"].endswith(f" hook codex --url {URL}")
    assert ours["hooks"][0]["timeout"] == 600
    config = tomllib.loads((home / "config.toml").read_text())
    assert config["model"] == "gpt-5-codex"
    assert config["mcp_servers"]["docs"] == {"url": "https://docs.example/mcp"}
    assert config["mcp_servers"]["hookbridge"] == {
        "url": f"{URL}/mcp",
        "bearer_token_env_var": "HOOKBRIDGE_TOKEN",
        "default_tools_approval_mode": "approve",
        "tool_timeout_sec": 3600,
    }
    # Trust for each of our hooks where it sits (PreToolUse's is the second group), none for the person's own.
    trust = config["hooks"]["state"]
    hooks_file = (home / "hooks.json").absolute()
    assert set(trust) == {
        f"{hooks_file}:{codex.event_label(event)}:{1 if event == 'PreToolUse' else 0}:0" for event in codex.EVENTS
    }
    key = f"{hooks_file}:pre_tool_use:1:0"
    assert trust[key]["trusted_hash"] == codex.trusted_hash("PreToolUse", ours, ours["hooks"][0])
    token = said.strip().splitlines()[-1].split("=", 1)[1]
    assert AgentToken.authenticate(token) is not None
    assert "hb_" not in (home / "config.toml").read_text() + (home / "hooks.json").read_text()


def test_unregister_gives_both_files_back_byte_for_byte(home: Path, db: None) -> None:
    before = {name: (home / name).read_bytes() for name in ("hooks.json", "config.toml")}
    run("register", "codex", "--codex-home", str(home), "--url", URL)
    run("register", "codex", "--codex-home", str(home), "--url", URL, "--token", "hb_x")  # again: nothing doubles
    assert len(json.loads((home / "hooks.json").read_text())["hooks"]["Stop"]) == 1
    assert (home / "config.toml").read_text().count("[mcp_servers.hookbridge]") == 1
    said = run("unregister", "codex", "--codex-home", str(home))
    assert "the MCP server and the hooks' trust" in said
    assert {name: (home / name).read_bytes() for name in before} == before


def test_a_file_without_a_final_newline_and_files_that_were_not_there_come_back_as_they_were(
    tmp_path: Path, db: None
) -> None:
    home = tmp_path / ".codex"
    home.mkdir()
    (home / "config.toml").write_text('model = "o3"')
    run("register", "codex", "--codex-home", str(home), "--url", URL, "--token", "hb_x")
    assert tomllib.loads((home / "config.toml").read_text())["model"] == "o3"
    run("unregister", "codex", "--codex-home", str(home))
    assert (home / "config.toml").read_text() == 'model = "o3"'
    assert not (home / "hooks.json").exists(), "register made it; unregister takes it away"
    empty = tmp_path / "new"
    run("register", "codex", "--codex-home", str(empty), "--url", URL, "--token", "hb_x")
    run("unregister", "codex", "--codex-home", str(empty))
    assert list(empty.iterdir()) == []


def test_a_new_url_replaces_the_hook_and_its_trust(home: Path, db: None) -> None:
    run("register", "codex", "--codex-home", str(home), "--url", URL, "--token", "hb_x")
    run(
        "register", "codex", "--codex-home", str(home), "--url", "http://10.0.0.5:8000", "--token", "hb_x", "--headless"
    )
    hooks = json.loads((home / "hooks.json").read_text())["hooks"]
    commands = [hook["command"] for group in hooks["Stop"] for hook in group["hooks"]]
    assert len(commands) == 1
    assert commands[0].endswith(" hook codex --url http://10.0.0.5:8000 --undecided deny")
    config = tomllib.loads((home / "config.toml").read_text())
    stop = hooks["Stop"][0]
    key = f"{(home / 'hooks.json').absolute()}:stop:0:0"
    assert config["hooks"]["state"][key]["trusted_hash"] == codex.trusted_hash("Stop", stop, stop["hooks"][0])


def test_it_refuses_a_name_the_person_already_uses_and_changes_nothing(home: Path, db: None) -> None:
    before = {name: (home / name).read_bytes() for name in ("hooks.json", "config.toml")}
    with pytest.raises(CommandError, match=r"config.toml already sets what Hook Bridge would add .*--name"):
        run("register", "codex", "--codex-home", str(home), "--url", URL, "--name", "docs")
    assert {name: (home / name).read_bytes() for name in before} == before


def test_it_refuses_a_config_that_is_not_toml_and_changes_nothing(home: Path, db: None) -> None:
    (home / "config.toml").write_text("model = \n")
    with pytest.raises(CommandError, match=r"config\.toml is not valid TOML"):
        run("register", "codex", "--codex-home", str(home), "--url", URL)
    assert (home / "config.toml").read_text() == "model = \n"
    assert json.loads((home / "hooks.json").read_text()) == OWN_HOOKS


def test_unregister_says_when_there_is_nothing_of_ours(home: Path) -> None:
    with pytest.raises(CommandError, match="nothing of Hook Bridge's is in"):
        run("unregister", "codex", "--codex-home", str(home))


@pytest.mark.parametrize(
    ("event", "digest"),
    [
        ("PermissionRequest", "sha256:f29d9e9c685a39fdddd775017df4e12ce77e9313d115955264be8b9218a3fa77"),
        ("Stop", "sha256:cecab181a1ad7cde4c79b76726fe49c9b2ca62c3865786c81739578428f76372"),
    ],
)
def test_the_trust_hash_is_the_one_codex_accepted_for_that_hook(event: str, digest: str) -> None:
    # Two hooks Codex 0.171 ran with these hashes as their trust (and ran none of without them), so a change
    # to the hashing shows here without the CLI.
    group = {"hooks": [{"type": "command", "command": "/tmp/cx2/capture.sh hook codex", "timeout": 30}]}
    assert codex.trusted_hash(event, group, group["hooks"][0]) == digest
