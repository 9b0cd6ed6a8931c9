"""Issue 31: where an agent's work lands: its token's project; else the one it names or works in; else the default."""

from __future__ import annotations

import pytest

from hooks.models import HookRun
from lifecycle.models import AgentSession, LifecycleEvent
from projects.models import Project
from questions.models import Question
from tokens.models import AgentToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def web() -> Project:
    return Project.objects.create(name="web")


def ask(token: AgentToken, text: str = "Which region?") -> Question:
    return Question.ask(asker=token, asker_name=token.name, text=text, options=[])[0]


def test_a_bound_tokens_work_lands_in_its_project_whatever_it_names(web: Project) -> None:
    token, _ = AgentToken.issue("web-agent", project=web)
    session = AgentSession.open(token=token, name="run", project="ops")
    assert (session.project, session.project_name) == (web, "ops")
    assert ask(token).project == web
    assert LifecycleEvent.record(asker=token, asker_name=token.name, event_type="plan-started").project == web


def test_a_token_for_every_project_works_where_its_session_names(web: Project) -> None:
    bot, _ = AgentToken.issue("bot", all_projects=True)
    session = AgentSession.open(token=bot, name="run", project="WEB")
    assert session.project == web
    question = ask(bot)
    assert (question.session, question.project) == (session, web)
    event = LifecycleEvent.record(asker=bot, asker_name=bot.name, event_type="plan-started")
    assert (event.session, event.project) == (session, web)


def test_a_host_session_lands_in_the_project_its_folder_is_named_for(web: Project) -> None:
    bot, _ = AgentToken.issue("bot", all_projects=True)
    # Claude Code's hooks name the session's project after the working folder (hosts.service).
    session, created = AgentSession.open_as(
        AgentSession().guid, token=bot, name="host", project="web", host="claude-code"
    )
    assert created
    assert session.project == web


def test_what_names_no_project_lands_in_the_default(web: Project) -> None:
    bot, _ = AgentToken.issue("bot", all_projects=True)
    assert AgentSession.open(token=bot, project="somewhere-else").project == Project.default()
    anonymous = Question.ask(asker=None, asker_name="script", text="?", options=[])[0]
    assert anonymous.project == Project.default()


def test_a_hook_run_lands_in_its_callers_project(web: Project) -> None:
    token, _ = AgentToken.issue("web-agent", project=web)
    run = HookRun.start(
        tool="p_lint", plugin="p", hook="lint", title="Lint", command="true", target=".", max_concurrent=1,
        timeout_seconds=5, caller=token, caller_name=token.name, fail_fast=True, verbose=False,
    )  # fmt: skip
    assert run.project == web


def test_the_default_project_may_not_be_deleted_while_work_is_in_it() -> None:
    ask(AgentToken.issue("agent")[0])
    from django.db.models import ProtectedError

    with pytest.raises(ProtectedError):
        Project.default().delete()
