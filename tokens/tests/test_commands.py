from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from tokens.models import AgentToken


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_token_prints_the_token_alone_on_the_last_line_and_stores_only_a_digest(db: None) -> None:
    raw = run("create_token", "claude-code").strip().splitlines()[-1]
    assert raw.startswith("hb_")
    assert " " not in raw
    token = AgentToken.objects.get()
    assert token.name == "claude-code"
    assert raw not in (token.token_hash, token.prefix)
    assert AgentToken.authenticate(raw) == token


def test_create_token_refuses_an_empty_name(db: None) -> None:
    with pytest.raises(CommandError, match="needs a name"):
        run("create_token", "  ")
    assert not AgentToken.objects.exists()


@pytest.mark.parametrize(
    ("name", "message"),
    [("x" * 101, "name: at most 100 characters, got 101"), ("nul\x00name", "name: must not contain a NUL character")],
)
def test_create_token_refuses_a_name_no_column_holds(db: None, name: str, message: str) -> None:
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("create_token", name, stdout=StringIO())
    assert not AgentToken.objects.exists()


def test_a_revoked_token_no_longer_authenticates(db: None) -> None:
    token, raw = AgentToken.issue("bot")
    token.revoke()
    assert AgentToken.authenticate(raw) is None


def test_bootstrap_local_prints_a_login_a_token_and_the_claude_command(db: None, tmp_path: Path) -> None:
    credentials = str(tmp_path / "credentials.json")
    first = run("bootstrap_local", "--url", "http://127.0.0.1:8123", "--credentials", credentials)
    password = next(line for line in first.splitlines() if "Log in as:" in line).split(" / ")[1]
    assert User.objects.get(username="admin").check_password(password)
    token = next(line for line in first.splitlines() if line.startswith("Agent token")).split(": ")[1]
    assert AgentToken.authenticate(token) is not None
    url = "http://127.0.0.1:8123/mcp"
    assert f'claude mcp add --transport http hookbridge {url} --header "Authorization: Bearer {token}"' in first

    second = run("bootstrap_local", "--url", "http://127.0.0.1:8123", "--credentials", credentials)
    assert f"Bearer {token}" in second
    assert password in second
    assert AgentToken.objects.count() == 1
    assert User.objects.count() == 1

    AgentToken.objects.get().revoke()
    third = run("bootstrap_local", "--url", "http://127.0.0.1:8123", "--credentials", credentials)
    assert f"Bearer {token}" not in third
    assert AgentToken.objects.active().count() == 1


def test_a_token_records_its_last_use_at_most_once_a_minute(db: None) -> None:
    token, raw = AgentToken.issue("bot")
    assert AgentToken.authenticate(raw) is not None
    first = AgentToken.objects.get(pk=token.pk).last_used_at
    assert first is not None
    AgentToken.authenticate(raw)
    assert AgentToken.objects.get(pk=token.pk).last_used_at == first


def test_create_token_takes_a_scope_and_an_expiry(db: None) -> None:
    raw = run("create_token", "bot", "--scope", "answer", "--expires-in-days", "30").strip().splitlines()[-1]
    token = AgentToken.authenticate(raw)
    assert token is not None
    assert token.scope == "answer"
    assert token.expires_at is not None
    with pytest.raises(CommandError):
        run("create_token", "bot", "--expires-in-days", "0")


def test_create_token_says_how_to_connect_claude_code_beside_the_token(db: None) -> None:
    out, err = StringIO(), StringIO()
    call_command("create_token", "laptop", stdout=out, stderr=err)
    raw = out.getvalue().strip().splitlines()[-1]
    assert raw.startswith("hb_"), "the token stays alone on stdout's last line, for scripts"
    assert (
        f'claude mcp add --transport http hookbridge http://127.0.0.1:8000/mcp --header "Authorization: Bearer {raw}"'
        in (err.getvalue())
    )
    call_command("create_token", "bot", "--scope", "answer", stdout=StringIO(), stderr=(quiet := StringIO()))
    assert "claude mcp add" not in quiet.getvalue(), "an answer token is not for Claude Code"
