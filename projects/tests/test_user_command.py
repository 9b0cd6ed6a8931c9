"""`user create` (also `hookbridge user create`): a newcomer makes the people a project's roles name (issue 39)."""

from __future__ import annotations

import io
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from hookbridge_site import cli


def run(*args: str, password: str = "a long enough passphrase", monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{password}\n"))  # no terminal: the password is one line of stdin
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_it_makes_a_person_who_can_sign_in(db: None, client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    said = run("user", "create", "alice", "--email", "alice@example.com", monkeypatch=monkeypatch)
    assert said.strip() == (
        "Made a person named 'alice'. Give them a project: project member PROJECT alice --role answerer"
    )
    alice = User.objects.get(username="alice")
    assert (alice.email, alice.is_staff, alice.is_superuser) == ("alice@example.com", False, False)
    assert client.login(username="alice", password="a long enough passphrase")


def test_admin_makes_an_admin(db: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "Made an admin named 'root'" in run("user", "create", "root", "--admin", monkeypatch=monkeypatch)
    root = User.objects.get(username="root")
    assert root.is_staff
    assert root.is_superuser


@pytest.mark.parametrize(
    ("args", "password", "message"),
    [
        (["bad name!"], "a long enough passphrase", "name: Enter a valid username"),
        (["carol", "--email", "not-an-address"], "a long enough passphrase", "email: Enter a valid email address"),
        (["carol"], "short", "password: This password is too short"),
        (["carol"], "password123", "password: This password is too common"),
        (["carol"], "48151623424815", "password: This password is entirely numeric"),
        (["carol.jones"], "carol.jones!", "password: The password is too similar to the username"),
        (["carol"], "", "password: empty; nothing was made"),
    ],
)
def test_it_refuses_what_it_cannot_make_naming_the_field(
    db: None, monkeypatch: pytest.MonkeyPatch, args: list[str], password: str, message: str
) -> None:
    with pytest.raises(CommandError, match=message):
        run("user", "create", *args, password=password, monkeypatch=monkeypatch)
    assert not User.objects.exclude(username="first").filter(username__in=["bad name!", "carol"]).exists()


def test_it_refuses_a_name_that_is_taken(db: None, monkeypatch: pytest.MonkeyPatch) -> None:
    User.objects.create_user("alice", password="her own passphrase")
    with pytest.raises(CommandError, match="name: A user with that username already exists"):
        run("user", "create", "alice", monkeypatch=monkeypatch)
    assert Client().login(username="alice", password="her own passphrase"), "her password is unchanged"


def test_the_hookbridge_command_knows_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    assert "hookbridge user create NAME [--email E] [--admin]" in capsys.readouterr().out
    assert cli.COMMANDS["user"] == "user"
