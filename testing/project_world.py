"""Issue 31's cast: two projects with a viewer, an answerer and an admin of "web", an outsider, a superuser.

Each project has an agent token and a pending question of its own, a session and a hook run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.test import Client

from hooks.models import HookRun
from lifecycle.models import AgentSession, LifecycleEvent
from projects.models import Project, Role
from questions.models import Question
from tokens.models import AgentToken, Scope

OPTIONS = [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]


@dataclass
class World:
    web: Project
    ops: Project
    people: dict[str, User]
    tokens: dict[str, AgentToken] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)
    questions: dict[str, Question] = field(default_factory=dict)
    sessions: dict[str, AgentSession] = field(default_factory=dict)
    runs: dict[str, HookRun] = field(default_factory=dict)


def make_world() -> World:
    """Call with HOOKBRIDGE_NEW_USER_ROLE empty: nobody joins the default project by signing up."""
    # No passwords: the tests log people in with force_login, and hashing five a test took most of its time.
    root = User.objects.create_superuser("root", email="", password=None)  # the first account: the default's admin
    web, ops = Project.objects.create(name="web"), Project.objects.create(name="ops")
    people = {"root": root}
    for name, role in [("vic", Role.VIEWER), ("ann", Role.ANSWERER), ("adm", Role.ADMIN)]:
        people[name] = User.objects.create_user(name, is_staff=name == "adm")
        web.set_member(people[name], role)
    people["out"] = User.objects.create_user("out", is_staff=True)
    ops.set_member(people["out"], Role.ANSWERER)
    world = World(web=web, ops=ops, people=people)
    for project in (web, ops):
        name = project.name
        token, raw = AgentToken.issue(f"{name}-agent", project=project)
        world.tokens[name], world.raw[name] = token, raw
        answering, answer_raw = AgentToken.issue(f"{name}-bot", scope=Scope.ANSWER, project=project)
        world.tokens[f"{name}-bot"], world.raw[f"{name}-bot"] = answering, answer_raw
        session = AgentSession.open(token=token, name=f"{name} run", project=f"{name}-app")
        world.sessions[name] = session
        LifecycleEvent.record(asker=token, asker_name=token.name, event_type="plan-started", phase_name=f"{name} plan")
        world.questions[name] = Question.ask(
            asker=token, asker_name=token.name, text=f"Deploy {name}?", options=OPTIONS
        )[0]
        world.runs[name] = HookRun.objects.create(
            tool="p_lint", plugin="p", hook="lint", title=f"{name} lint", command="true", target=".",
            timeout_seconds=5, caller=token, caller_name=token.name, project=project,
        )  # fmt: skip
    bot, bot_raw = AgentToken.issue("team-bot", scope=Scope.ANSWER, all_projects=True)
    world.tokens["all-bot"], world.raw["all-bot"] = bot, bot_raw
    return world


def as_(world: World, name: str) -> Client:
    """A browser-less client logged in as one of the world's people."""
    client = Client()
    client.force_login(world.people[name])
    return client
