"""Issue 31's promise: moving to projects keeps everything.

`run()` migrates the database it is given back to the layout before projects (no projects
app; a session's agent-given project in `project`), fills it through that layout's own
historical models, migrates to the newest layout and checks every row after: all of it in
the default project, everyone a member (staff its admins, others its answerers), every
token still working and bound to the default project. The SQLite test runs it in-process;
the team test runs this module as a program against a fresh PostgreSQL database.
"""

from __future__ import annotations

import uuid
from typing import Any

from testing import migration_check

BEFORE = [
    ("projects", None),
    ("tokens", "0003_owner_and_oauth_client"),
    ("lifecycle", "0006_claude_code_hooks"),
    ("hooks", "0002_tables_named_for_their_app"),
    ("questions", "0013_answer_images"),
    ("notify", "0002_policy_named_for_a_project"),
    ("mcpapi", "0003_agenttoken_moved_to_tokens"),
]


def _fill(old: Any) -> dict[str, Any]:
    from django.contrib.auth.hashers import make_password
    from django.utils import timezone

    from tokens.models import digest

    now = timezone.now()
    User = old.get_model("auth", "User")
    people = {
        "alice": User.objects.create(username="alice", password=make_password("pw"), is_staff=True, is_superuser=True),
        "bob": User.objects.create(username="bob", password=make_password("pw")),
        "carol": User.objects.create(username="carol", password=make_password("pw"), is_staff=True),
    }
    Token = old.get_model("tokens", "AgentToken")
    raw = "hb_before-projects-" + uuid.uuid4().hex
    token = Token.objects.create(name="agent-a", token_hash=digest(raw), prefix=raw[:10], scope="agent",
                                 created_at=now, user=people["bob"])  # fmt: skip
    answer_raw = "hb_answer-before-projects-" + uuid.uuid4().hex
    answerer = Token.objects.create(name="answer-bot", token_hash=digest(answer_raw), prefix=answer_raw[:10],
                                    scope="answer", created_at=now)  # fmt: skip
    Session = old.get_model("lifecycle", "AgentSession")
    session = Session.objects.create(owner_name="agent-a", token=token, name="run", project="web",
                                     created_at=now, last_activity_at=now)  # fmt: skip
    event = old.get_model("lifecycle", "LifecycleEvent").objects.create(
        event_type="plan-started", phase_name="Plan", asker=token, asker_name="agent-a", session=session, created_at=now
    )
    Question = old.get_model("questions", "Question")
    pending = Question.objects.create(kind="question", text="Which region?", asker=token, asker_name="agent-a",
                                      fingerprint="f" * 64, session=session, created_at=now)  # fmt: skip
    answered = Question.objects.create(
        kind="question", text="Ship it?", asker=token, asker_name="agent-a", fingerprint="e" * 64,
        status="answered", created_at=now, resolved_at=now,
    )  # fmt: skip
    old.get_model("questions", "Answer").objects.create(
        question=answered, text="yes", answered_by="alice", answered_by_user=people["alice"], source="dashboard",
        created_at=now,
    )  # fmt: skip
    run = old.get_model("hooks", "HookRun").objects.create(
        tool="p_lint", plugin="p", hook="lint", title="Lint", command="make lint", target=".", timeout_seconds=60,
        caller=token, caller_name="agent-a", status="passed", started_at=now, heartbeat_at=now, finished_at=now,
    )  # fmt: skip
    return {
        "raw": raw, "answer_raw": answer_raw, "token": token.pk, "answerer": answerer.pk, "session": session.pk,
        "event": event.pk, "pending": pending.pk, "answered": answered.pk, "run": run.pk,
    }  # fmt: skip


def _check(made: dict[str, Any]) -> None:
    from django.contrib.auth.models import User

    from hooks.models import HookRun
    from lifecycle.models import AgentSession, LifecycleEvent
    from projects.models import Membership, Project
    from questions.models import Question
    from tokens.models import AgentToken

    default = Project.objects.get()
    assert (default.name, default.is_default) == ("default", True)
    roles = dict(Membership.objects.values_list("user__username", "role"))
    assert roles == {"alice": "admin", "bob": "answerer", "carol": "admin"}, roles

    token = AgentToken.authenticate(made["raw"])
    assert token is not None, "the agent token still authenticates"
    assert token.pk == made["token"]
    assert token.project_id == default.pk
    answerer = AgentToken.authenticate(made["answer_raw"])
    assert answerer is not None
    assert answerer.project_id == default.pk

    session = AgentSession.objects.get(pk=made["session"])
    assert (session.project_id, session.project_name, session.token_id) == (default.pk, "web", token.pk)
    assert LifecycleEvent.objects.get(pk=made["event"]).project_id == default.pk
    pending = Question.objects.get(pk=made["pending"])
    assert (pending.project_id, pending.session_id, pending.status) == (default.pk, session.pk, "pending")
    answered = Question.objects.select_related("answer").get(pk=made["answered"])
    assert (answered.project_id, answered.answer.text) == (default.pk, "yes")
    assert answered.answer.answered_by_user == User.objects.get(username="alice")
    assert HookRun.objects.get(pk=made["run"]).project_id == default.pk

    # And what comes after lands where it should: a new question of the old token, in the default project.
    asked, _ = Question.ask(asker=token, asker_name=token.name, text="After the move?", options=[])
    assert asked.project_id == default.pk


def run() -> None:
    # Up first, then back: the way an upgraded database came to the old layout (from empty, the partial
    # layout would need the tables issue 14 renamed in an order Django does not plan for).
    migration_check._migrate(None)
    migration_check.run(BEFORE, _fill, _check)


SAID = "every row landed in the default project"

if __name__ == "__main__":
    migration_check.main(run, SAID)
