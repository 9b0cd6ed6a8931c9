"""Issue 31: `manage.py project create|member|list` (and `hookbridge project …`), and tokens bound to a project."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from hookbridge_site import cli
from projects.models import Membership, Project
from tokens.models import AgentToken


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def bob(db: None) -> User:
    User.objects.create_user("first")  # the first account is the default project's admin; bob is not the first
    return User.objects.create_user("bob")


def test_it_creates_a_project(db: None) -> None:
    assert "Created project 'web'" in run("project", "create", "web")
    assert Project.objects.filter(name="web", is_default=False).exists()


@pytest.mark.parametrize(
    ("name", "message"),
    [("bad name", "name: A project's name is letters"), (".web", "name: A project's name"), ("x" * 101, "name: ")],
)
def test_it_refuses_a_name_it_cannot_keep(db: None, name: str, message: str) -> None:
    # What was there before, not "default": a transactional test before this one on the worker flushed the
    # default project that the migration makes.
    before = list(Project.objects.values_list("name", flat=True))
    with pytest.raises(CommandError, match=message):
        run("project", "create", name)
    assert list(Project.objects.values_list("name", flat=True)) == before


def test_it_refuses_a_second_project_of_one_name(db: None) -> None:
    run("project", "create", "web")
    with pytest.raises(CommandError, match="name: a project named 'Web' exists already"):
        run("project", "create", "Web")


def test_it_gives_a_role_changes_it_and_takes_it_away(bob: User) -> None:
    run("project", "create", "web")
    assert "'bob' is now viewer in 'web'" in run("project", "member", "web", "bob", "--role", "viewer")
    assert Membership.objects.get(project__name="web", user=bob).role == "viewer"
    run("project", "member", "web", "bob", "--role", "admin")
    assert Membership.objects.get(project__name="web", user=bob).role == "admin"
    assert "Took 'bob' out of 'web'" in run("project", "member", "web", "bob", "--remove")
    assert not Membership.objects.filter(project__name="web", user=bob).exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "bob", "--role", "viewer"], "no project named 'nope' \\(projects: default, web\\)"),
        (["web", "nobody", "--role", "viewer"], "no person named 'nobody'; make them with: hookbridge user create"),
        (["web", "bob"], "say either --role viewer\\|answerer\\|admin or --remove"),
        (["web", "bob", "--role", "viewer", "--remove"], "say either"),
        (["web", "bob", "--remove"], "'bob' is not a member of 'web'"),
    ],
)
def test_it_names_what_does_not_exist(bob: User, args: list[str], message: str) -> None:
    run("project", "create", "web")
    with pytest.raises(CommandError, match=message):
        run("project", "member", *args)
    assert not Membership.objects.filter(project__name="web").exists()


def test_it_refuses_a_role_that_does_not_exist(bob: User, capsys: pytest.CaptureFixture[str]) -> None:
    run("project", "create", "web")
    with pytest.raises(SystemExit):
        cli.main(["project", "member", "web", "bob", "--role", "boss"])
    assert "invalid choice: 'boss' (choose from 'viewer', 'answerer', 'admin')" in capsys.readouterr().err
    assert not Membership.objects.filter(project__name="web").exists()


def test_it_lists_projects_and_members(bob: User) -> None:
    run("project", "create", "web")
    run("project", "member", "web", "bob", "--role", "viewer")
    listed = run("project", "list")
    assert "default (default): bob (answerer), first (admin)" in listed
    assert "web: bob (viewer)" in listed


# Transactional: the command closes the database connection when it ends, as Django's command line does, and a
# test's own transaction ends with it.
@pytest.mark.django_db(transaction=True)
def test_the_hookbridge_command_is_the_same_command(bob: User, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["project", "create", "ops"]) == 0
    assert cli.main(["project", "member", "ops", "bob", "--role", "answerer"]) == 0
    assert cli.main(["project", "list"]) == 0
    assert "ops: bob (answerer)" in capsys.readouterr().out


def test_a_token_is_bound_to_the_project_named(db: None) -> None:
    run("project", "create", "web")
    out = run("create_token", "web-agent", "--project", "web")
    assert "in project 'web'" in out
    assert AgentToken.objects.get(name="web-agent").project == Project.objects.get(name="web")


def test_a_token_made_without_a_project_lands_in_the_default(db: None) -> None:
    assert "in project 'default'" in run("create_token", "laptop")
    assert AgentToken.objects.get(name="laptop").project == Project.default()


def test_a_token_for_every_project_has_none(db: None) -> None:
    assert "in every project" in run("create_token", "team-bot", "--scope", "answer", "--all-projects")
    assert AgentToken.objects.get(name="team-bot").project is None


def test_a_token_for_a_project_that_does_not_exist_is_not_made(db: None) -> None:
    with pytest.raises(CommandError, match="no project named 'nope'"):
        run("create_token", "x", "--project", "nope")
    assert not AgentToken.objects.exists()


def test_a_new_account_joins_the_default_project(db: None, settings: Any) -> None:
    first = User.objects.create_user("first")
    second = User.objects.create_user("second")
    settings.HOOKBRIDGE_NEW_USER_ROLE = ""
    third = User.objects.create_user("third")
    roles = dict(Membership.objects.values_list("user__username", "role"))
    assert roles == {"first": "admin", "second": "answerer"}
    assert {first.pk, second.pk} == set(Project.default().members.values_list("pk", flat=True))
    assert not third.memberships.exists()
