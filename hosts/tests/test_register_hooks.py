"""register claude-code --hooks and unregister claude-code --hooks, on settings files with other content."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from tokens.models import AgentToken

SETTINGS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(./.env)"]},
    "env": {"GREETING": "héllo"},
    "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}]},
    "model": "opus",
}
URL = "http://127.0.0.1:8123/mcp"


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.local.json").write_text(json.dumps(SETTINGS, indent=2, ensure_ascii=False) + "\n")
    (tmp_path / ".claude" / "settings.local.json").chmod(0o640)
    return tmp_path


def test_it_writes_the_hooks_block_and_leaves_the_rest_as_it_was(project: Path, db: None) -> None:
    path = project / ".claude" / "settings.local.json"
    output = run("register", "claude-code", "--hooks", "--project", str(project), "--url", URL)
    data = json.loads(path.read_text())
    for key in ("permissions", "env", "model"):
        assert data[key] == SETTINGS[key]
    entry = {
        "type": "http",
        "url": "http://127.0.0.1:8123/hooks/claude",
        "timeout": 600,
        "headers": {"Authorization": "Bearer $HOOKBRIDGE_TOKEN"},
        "allowedEnvVars": ["HOOKBRIDGE_TOKEN"],
    }
    assert data["hooks"]["PermissionRequest"] == [{"matcher": "*", "hooks": [entry]}]
    assert data["hooks"]["Stop"] == [{"hooks": [entry]}]
    # The team's own hook stays, ours beside it.
    assert data["hooks"]["PostToolUse"] == [*SETTINGS["hooks"]["PostToolUse"], {"matcher": "*", "hooks": [entry]}]
    assert set(data["hooks"]) == {
        "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop", "SessionEnd", "Notification",
    }  # fmt: skip
    # The token is printed for the person, never written into the file.
    token = output.strip().splitlines()[-1].split("=", 1)[1]
    assert AgentToken.authenticate(token) is not None
    assert token not in path.read_text()
    assert path.stat().st_mode & 0o777 == 0o640


def test_unregister_restores_the_file_byte_for_byte(project: Path, db: None) -> None:
    path = project / ".claude" / "settings.local.json"
    before = path.read_bytes()
    run("register", "claude-code", "--hooks", "--project", str(project), "--url", URL, "--token", "t")
    run(
        "register", "claude-code", "--hooks", "--project", str(project), "--url", URL, "--token", "t"
    )  # twice: no duplicates
    assert path.read_text().count("/hooks/claude") == 7
    output = run("unregister", "claude-code", "--hooks", "--project", str(project), "--url", URL)
    assert "Removed the hooks" in output
    assert path.read_bytes() == before
    with pytest.raises(CommandError, match="no hooks to"):
        run("unregister", "claude-code", "--hooks", "--project", str(project), "--url", URL)


def test_it_writes_only_the_chosen_events_into_the_chosen_file(tmp_path: Path, db: None) -> None:
    run(
        "register", "claude-code", "--hooks", "--project", str(tmp_path), "--url", URL, "--token", "t",
        "--scope", "project", "--events", "PermissionRequest,Stop", "--token-env", "HB_TOKEN", "--timeout", "120",
    )  # fmt: skip
    data = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert list(data["hooks"]) == ["PermissionRequest", "Stop"]
    hook = data["hooks"]["Stop"][0]["hooks"][0]
    assert hook["headers"] == {"Authorization": "Bearer $HB_TOKEN"}
    assert hook["allowedEnvVars"] == ["HB_TOKEN"]
    assert hook["timeout"] == 120
    assert not (tmp_path / ".claude" / "settings.local.json").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--events", "PreToolUse,Nope"], "--events: unknown event Nope"),
        (["--token-env", "NOT A NAME"], "--token-env"),
    ],
)
def test_it_refuses_bad_options_and_writes_nothing(project: Path, db: None, args: list[str], said: str) -> None:
    path = project / ".claude" / "settings.local.json"
    before = path.read_bytes()
    with pytest.raises(CommandError, match=said):
        run("register", "claude-code", "--hooks", "--project", str(project), "--url", URL, "--token", "t", *args)
    assert path.read_bytes() == before


def test_it_refuses_a_settings_file_that_is_not_json(project: Path, db: None) -> None:
    path = project / ".claude" / "settings.local.json"
    path.write_text("{ broken")
    with pytest.raises(CommandError, match="not valid JSON"):
        run("register", "claude-code", "--hooks", "--project", str(project), "--url", URL, "--token", "t")
    assert path.read_text() == "{ broken"


def test_approve_adds_a_pre_tool_use_that_waits_for_the_team_and_unregister_takes_it_too(
    project: Path, db: None
) -> None:
    path = project / ".claude" / "settings.local.json"
    before = path.read_bytes()
    options = ["--hooks", "--project", str(project), "--url", URL, "--token", "t", "--approve", "Bash|Write"]
    said = run("register", "claude-code", *options)
    assert "PreToolUse (Bash|Write: every use waits for the team)" in said
    groups = json.loads(path.read_text())["hooks"]["PreToolUse"]
    approving = [group for group in groups if group["hooks"][0]["url"].endswith("?approve=1")]
    assert approving == [
        {
            "matcher": "Bash|Write",
            "hooks": [
                {
                    "type": "http",
                    "url": "http://127.0.0.1:8123/hooks/claude?approve=1",
                    "timeout": 600,
                    "headers": {"Authorization": "Bearer $HOOKBRIDGE_TOKEN"},
                    "allowedEnvVars": ["HOOKBRIDGE_TOKEN"],
                }
            ],
        }
    ]
    assert len(groups) == 2, "beside the PreToolUse that records every tool use"
    run("register", "claude-code", *options)
    assert path.read_text().count("?approve=1") == 1, "a second register adds nothing"
    run("unregister", "claude-code", "--hooks", "--project", str(project), "--url", URL)
    assert path.read_bytes() == before


def test_approve_refuses_a_pattern_that_is_not_a_regular_expression_and_writes_nothing(project: Path, db: None) -> None:
    path = project / ".claude" / "settings.local.json"
    before = path.read_bytes()
    with pytest.raises(CommandError, match=r"--approve: 'Bash\(' is not a regular expression"):
        run(
            "register",
            "claude-code",
            "--hooks",
            "--project",
            str(project),
            "--url",
            URL,
            "--token",
            "t",
            "--approve",
            "Bash(",
        )
    assert path.read_bytes() == before
