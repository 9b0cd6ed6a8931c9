"""register claude-code and unregister claude-code, against a temporary HOME."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from tokens.models import AgentToken

ORIGINAL: dict[str, Any] = {
    "numStartups": 12,
    "projects": {"/elsewhere": {"mcpServers": {"other": {"type": "stdio", "command": "x"}}, "allowedTools": []}},
    "theme": "dark",
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".claude.json").write_text(json.dumps(ORIGINAL))
    return tmp_path


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


def test_it_registers_and_unregisters_leaving_everything_else_intact(home: Path, db: None) -> None:
    project = home / "repo"
    project.mkdir()
    output = run("register", "claude-code", "--project", str(project), "--url", "http://127.0.0.1:8123/mcp")
    assert "Restart Claude Code" in output
    data = json.loads((home / ".claude.json").read_text())
    entry = data["projects"][str(project)]["mcpServers"]["hookbridge"]
    assert entry["type"] == "http"
    assert entry["url"] == "http://127.0.0.1:8123/mcp"
    token = entry["headers"]["Authorization"].removeprefix("Bearer ")
    assert AgentToken.authenticate(token) is not None
    assert data["projects"]["/elsewhere"] == ORIGINAL["projects"]["/elsewhere"]
    assert data["theme"] == "dark"

    run("unregister", "claude-code", "--project", str(project))
    assert json.loads((home / ".claude.json").read_text()) == ORIGINAL


def test_it_refuses_a_file_it_cannot_parse_and_leaves_it_untouched(home: Path, db: None) -> None:
    (home / ".claude.json").write_text('{"projects": {broken')
    with pytest.raises(CommandError, match="not valid JSON"):
        run("register", "claude-code", "--project", str(home), "--token", "hb_x")
    assert (home / ".claude.json").read_text() == '{"projects": {broken'
    assert not AgentToken.objects.exists()


def test_print_writes_nothing(home: Path, db: None) -> None:
    output = run("register", "claude-code", "--print", "--token", "hb_given", "--url", "http://h/mcp")
    assert '"Authorization": "Bearer hb_given"' in output
    assert 'claude mcp add --transport http hookbridge http://h/mcp --header "Authorization: Bearer hb_given"' in output
    assert json.loads((home / ".claude.json").read_text()) == ORIGINAL


def test_unregistering_what_is_not_there_is_an_error(home: Path, db: None) -> None:
    with pytest.raises(CommandError, match="no server 'hookbridge'"):
        run("unregister", "claude-code", "--project", str(home))
    assert json.loads((home / ".claude.json").read_text()) == ORIGINAL


def test_the_stdio_entry_of_the_installed_command_runs_it_again_without_register(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpapi.management.commands.mcp_stdio import stdio_entry

    script = tmp_path / "bin" / "hookbridge"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    monkeypatch.setattr("sys.argv", [str(script), "stdio", "--register"])
    for name in ("HOOKBRIDGE_DATA_DIR", "DATABASE_URL", "REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOOKBRIDGE_DATA_DIR", "/srv/hookbridge")
    assert stdio_entry("maxsim+askme", "") == {
        "type": "stdio",
        "command": str(script.resolve()),
        "args": ["stdio", "--toolsets", "maxsim+askme"],
        "env": {"HOOKBRIDGE_DATA_DIR": "/srv/hookbridge"},
    }
    monkeypatch.delenv("HOOKBRIDGE_DATA_DIR")
    assert stdio_entry("askme", "tok") == {
        "type": "stdio",
        "command": str(script.resolve()),
        "args": ["stdio", "--toolsets", "askme"],
        "env": {"HOOKBRIDGE_TOKEN": "tok"},
    }
