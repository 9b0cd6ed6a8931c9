"""Issue 14: the re-cut moved AgentToken to tokens and HookRun to hooks; no row, link or token is lost."""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import call_command

from testing import migration_check, migration_projects_check
from testing.live import ROOT
from testing.team import fresh_postgres_database, require_team_services


@pytest.mark.django_db(transaction=True)
def test_it_keeps_every_row_and_token_when_models_move_between_apps() -> None:
    migration_check.run()


@pytest.mark.django_db
def test_it_has_a_migration_for_every_model_change() -> None:
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


def run_on_postgresql(module: str, said: str) -> None:
    """The module's check as a program, against a fresh PostgreSQL database."""
    require_team_services()
    with fresh_postgres_database() as url:
        done = subprocess.run(
            [sys.executable, "-m", module],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": url},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert said in done.stdout


@pytest.mark.team
def test_it_keeps_every_row_and_token_on_postgresql() -> None:
    run_on_postgresql("testing.migration_check", migration_check.SAID)


@pytest.mark.django_db(transaction=True)
def test_it_moves_every_row_and_person_into_the_default_project() -> None:
    migration_projects_check.run()


@pytest.mark.team
def test_it_moves_every_row_into_the_default_project_on_postgresql() -> None:
    run_on_postgresql("testing.migration_projects_check", migration_projects_check.SAID)


@pytest.mark.django_db(transaction=True)
def test_it_gives_each_named_policy_to_its_project_and_disables_the_rest() -> None:
    """Issue 37: policies chosen by a name move to the project of that name; the others stay, disabled, with why."""
    old = migration_check._migrate([("notify", "0002_policy_named_for_a_project")])
    Project = old.get_model("projects", "Project")
    web = Project.objects.create(name="web")
    Policy = old.get_model("notify", "NotifyPolicy")
    Policy.objects.create(project="WEB", steps="email@0s", email_to="web@example.com")
    Policy.objects.create(project="web", steps="slack@0s")
    Policy.objects.create(project="web-app", steps="email@1m", email_to="who@example.com")
    try:
        new = migration_check._migrate(None)
        moved = {policy.former_name: policy for policy in new.get_model("notify", "NotifyPolicy").objects.all()}
        assert (moved["WEB"].project_id, moved["WEB"].enabled, moved["WEB"].note) == (web.pk, True, "")
        assert (moved["web"].project_id, moved["web"].enabled) == (None, False)
        assert "already had a policy" in moved["web"].note
        assert (moved["web-app"].project_id, moved["web-app"].enabled) == (None, False)
        assert "'web-app' is no project's name" in moved["web-app"].note
        assert moved["web-app"].email_to == "who@example.com", "kept for its admin to see"
    finally:
        migration_check._migrate(None)


@pytest.mark.django_db(transaction=True)
def test_a_rules_table_from_before_projects_is_brought_up_and_named_for_its_app_with_every_row() -> None:
    """Issue 58 took the app `claudecode` away: a database whose rules table is still in claudecode's first shape
    (a `project` folder, no project link; from before issue 31) is brought up by approvals' first migration."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from approvals.models import ApprovalRule

    MigrationExecutor(connection).migrate([("approvals", None)])
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE claudecode_approvalrule (id integer NOT NULL PRIMARY KEY AUTOINCREMENT, position integer "
            "NOT NULL, tool_pattern varchar(200) NOT NULL, input_pattern varchar(500) NOT NULL, project varchar(500) "
            "NOT NULL, action varchar(8) NOT NULL, message varchar(1000) NOT NULL, enabled bool NOT NULL, created_at "
            "datetime NOT NULL, updated_at datetime NOT NULL)"
        )
        cursor.execute(
            "INSERT INTO claudecode_approvalrule (position, tool_pattern, input_pattern, project, action, message, "
            "enabled, created_at, updated_at) VALUES (5, 'Bash', '^npm test$', '/home/dev/shop', 'allow', '', 1, "
            "'2026-01-02 03:04:05', '2026-01-02 03:04:05')"
        )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    rule = ApprovalRule.objects.get()
    assert (rule.position, rule.tool_pattern, rule.input_pattern) == (5, "Bash", "^npm test$")
    assert (rule.folder, rule.project_id) == ("/home/dev/shop", None), "the folder kept, no project yet"
    tables = connection.introspection.table_names()
    assert "approvals_approvalrule" in tables
    assert "claudecode_approvalrule" not in tables
