"""Issue 14's promise: moving models between apps loses nothing.

`run()` migrates the database it is given back (or up) to the layout before the
re-cut (AgentToken in mcpapi, HookRun in lifecycle), fills it through that
layout's own historical models, migrates to the newest layout and checks that
every row, every link between rows and every token is still there and valid.
The SQLite test runs it in-process; the team test runs this module as a program
against a fresh PostgreSQL database.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

# The layout of the commit before the re-cut: the newest migration of each app then; the new apps did not exist.
BEFORE = [
    ("mcpapi", "0002_token_scopes"),
    ("questions", "0006_agent_left"),
    ("lifecycle", "0004_hook_runs"),
    ("tokens", None),
    ("hooks", None),
    ("notify", None),
]


# The rules' app, which came after every layout these checks start from (issue 53; their table was claudecode's).
EARLIER_RULES: list[tuple[str, str | None]] = [("approvals", None)]


def _migrate(targets: list[tuple[str, str | None]] | None) -> Any:
    """Migrate to `targets` (None: the newest layout) and return that layout's historical models."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    leaves = executor.loader.graph.leaf_nodes()
    if targets is None:
        targets = leaves
    else:
        # Apps the re-cut did not touch (Django's own) stay at their newest migration.
        named = {app for app, _ in targets}
        moved = [(app, name) for app, name in EARLIER_RULES if app not in named]
        named |= {app for app, _ in moved}
        targets = [*targets, *moved, *(leaf for leaf in leaves if leaf[0] not in named and leaf[0] != "dashboard")]
    executor.migrate(targets)
    executor.loader.build_graph()
    # An app migrated to zero (None) is simply absent from the state.
    nodes = [(app, name) for app, name in targets if name is not None]
    return executor.loader.project_state(nodes).apps


def _fill(old: Any) -> dict[str, Any]:
    """Rows of every moved model and of everything that points at one, written through the old layout."""
    from django.contrib.auth.hashers import make_password
    from django.utils import timezone

    from tokens.models import digest

    now = timezone.now()
    Token = old.get_model("mcpapi", "AgentToken")
    raw = "hb_before-the-move-" + uuid.uuid4().hex
    token = Token.objects.create(
        name="agent-a", token_hash=digest(raw), prefix=raw[:10], scope="agent", created_at=now, last_used_at=now
    )
    answer_raw = "hb_answerer-" + uuid.uuid4().hex
    answerer = Token.objects.create(name="answer-bot", token_hash=digest(answer_raw), prefix=answer_raw[:10],
                                    scope="answer", created_at=now)  # fmt: skip
    revoked = Token.objects.create(name="old", token_hash=digest("hb_revoked"), prefix="hb_revoked",
                                   created_at=now, revoked_at=now)  # fmt: skip
    User = old.get_model("auth", "User")
    alice = User.objects.create(username="alice", password=make_password("pw"), is_superuser=True, is_staff=True)
    Session = old.get_model("lifecycle", "AgentSession")
    session = Session.objects.create(owner_name="agent-a", token=token, name="run", project="hookbridge",
                                     created_at=now, last_activity_at=now)  # fmt: skip
    old.get_model("lifecycle", "SessionEvent").objects.create(session=session, type="ack", data={}, created_at=now)
    old.get_model("lifecycle", "LifecycleEvent").objects.create(
        event_type="plan-started", phase_name="Plan", asker=token, asker_name="agent-a", session=session, created_at=now
    )
    Question = old.get_model("questions", "Question")
    pending = Question.objects.create(kind="question", text="Which region?", asker=token, asker_name="agent-a",
                                      fingerprint="f" * 64, session=session, created_at=now)  # fmt: skip
    answered = Question.objects.create(kind="hypothesis", text="Rate these", payload={"hypotheses": ["a"]},
                                       asker=token, asker_name="agent-a", fingerprint="e" * 64, status="answered",
                                       created_at=now - timedelta(minutes=5), resolved_at=now)  # fmt: skip
    old.get_model("questions", "Answer").objects.create(
        question=answered, text="a: Agree", data={"ratings": []}, answered_by="answer-bot",
        answered_by_token=answerer, answered_by_user=alice, source="api", created_at=now,
    )  # fmt: skip
    Run = old.get_model("lifecycle", "HookRun")
    run = Run.objects.create(tool="p_lint", plugin="p", hook="lint", title="Lint", command="make lint", target=".",
                             timeout_seconds=60, caller=token, caller_name="agent-a", status="failed",
                             started_at=now, heartbeat_at=now, finished_at=now)  # fmt: skip
    old.get_model("lifecycle", "HookRunDirectory").objects.create(
        run=run, position=0, directory="web", status="failed", exit_code=2, output="lint error"
    )
    ContentType = old.get_model("contenttypes", "ContentType")
    token_type = ContentType.objects.get_or_create(app_label="mcpapi", model="agenttoken")[0]
    run_type = ContentType.objects.get_or_create(app_label="lifecycle", model="hookrun")[0]
    return {
        "raw": raw, "answer_raw": answer_raw, "token": token.pk, "answerer": answerer.pk, "revoked": revoked.pk,
        "session": session.pk, "pending": pending.pk, "answered": answered.pk, "run": run.pk,
        "token_type": token_type.pk, "run_type": run_type.pk,
    }  # fmt: skip


def _check(made: dict[str, Any]) -> None:
    """Everything written before the move, read through today's models."""
    from django.contrib.contenttypes.models import ContentType

    from hooks.models import HookRun
    from lifecycle.models import AgentSession, LifecycleEvent
    from questions.models import Question
    from tokens.models import AgentToken

    assert AgentToken.objects.count() == 3
    token = AgentToken.authenticate(made["raw"])
    assert token is not None, "the agent token still authenticates"
    assert token.pk == made["token"]
    assert token.scope == "agent"
    answerer = AgentToken.authenticate(made["answer_raw"])
    assert answerer is not None, "the answer token still authenticates"
    assert answerer.scope == "answer"
    assert AgentToken.authenticate("hb_revoked") is None, "a revoked token stays revoked"

    session = AgentSession.objects.get(pk=made["session"])
    assert session.token_id == token.pk
    assert list(session.events.values_list("type", flat=True)) == ["ack"]
    event = LifecycleEvent.objects.get()
    assert (event.asker_id, event.session_id, event.phase_name) == (token.pk, session.pk, "Plan")

    pending = Question.objects.get(pk=made["pending"])
    assert (pending.asker_id, pending.session_id, pending.status) == (token.pk, session.pk, "pending")
    answered = Question.objects.select_related("answer").get(pk=made["answered"])
    assert answered.answer.answered_by_token_id == answerer.pk
    assert answered.answer.answered_by_user is not None
    assert answered.answer.answered_by_user.username == "alice"
    assert answered.kind_spec.name == "hypothesis"
    assert Question.objects.count() == 2

    run = HookRun.objects.get(pk=made["run"])
    assert (run.caller_id, run.status, run.title) == (token.pk, "failed", "Lint")
    assert [(d.directory, d.exit_code, d.output) for d in run.directories.all()] == [("web", 2, "lint error")]

    # Issue 28: the tables are named for the app that owns them now, their rows carried along.
    from django.db import connection

    tables = set(connection.introspection.table_names())
    assert {"tokens_agenttoken", "hooks_hookrun", "hooks_hookrundirectory"} <= tables
    assert not {"mcpapi_agenttoken", "lifecycle_hookrun", "lifecycle_hookrundirectory"} & tables

    # The content types moved with their models, so admin permissions and log entries still point at them.
    assert ContentType.objects.get(pk=made["token_type"]).model_class() is AgentToken
    assert ContentType.objects.get(pk=made["run_type"]).model_class() is HookRun


def run(
    before: list[tuple[str, str | None]] | None = None,
    fill: Callable[[Any], dict[str, Any]] | None = None,
    check: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Migrate back to `before`, `fill` through that layout, migrate to the newest, `check` (default: issue 14's)."""
    made = (fill or _fill)(_migrate(BEFORE if before is None else before))
    _migrate(None)
    (check or _check)(made)


def main(runner: Callable[[], None], said: str) -> None:
    """As a program (python -m tests.<module>), with DATABASE_URL naming an empty database."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hookbridge_site.settings")
    import django

    django.setup()
    runner()
    sys.stdout.write(said + "\n")


SAID = "every row and token survived the move"

if __name__ == "__main__":
    main(run, SAID)
