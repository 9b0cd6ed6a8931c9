"""Issue 31: who may make agent tokens on their page, and the project a signed-in agent works in."""

from __future__ import annotations

from typing import Any

from django.test import Client
from oauth2_provider.models import get_grant_model

from projects.models import Project
from testing.oauth import allow, authorization, exchange, pkce, register
from testing.project_world import World, as_
from tokens import oauth
from tokens.models import AgentToken


def made_by(world: World, name: str) -> list[AgentToken]:
    return list(AgentToken.objects.filter(user=world.people[name]))


def test_a_viewer_may_not_make_an_agent_token(world: World) -> None:
    response = as_(world, "vic").post("/tokens/mine")
    assert response.status_code == 403
    assert made_by(world, "vic") == []


def test_an_answerer_makes_one_for_their_project(world: World) -> None:
    response = as_(world, "ann").post("/tokens/mine")
    assert response.status_code == 200
    [token] = made_by(world, "ann")
    assert token.project == world.web
    assert "hb_" in response.text


def test_a_person_may_not_make_one_for_a_project_they_do_not_answer_in(world: World) -> None:
    response = as_(world, "ann").post("/tokens/mine", {"project": str(world.ops.pk)})
    assert response.status_code == 403
    assert made_by(world, "ann") == []


def test_the_role_it_needs_is_a_setting(world: World, settings: Any) -> None:
    settings.HOOKBRIDGE_TOKEN_ROLE = "admin"
    assert as_(world, "ann").post("/tokens/mine").status_code == 403
    assert as_(world, "adm").post("/tokens/mine").status_code == 200
    assert made_by(world, "adm")[0].project == world.web


def test_the_first_person_makes_one_for_the_default_project(db: None, logged_in: Client) -> None:
    """The dashboard's first-run button: the first account is the default project's admin."""
    assert logged_in.post("/tokens/mine").status_code == 200
    assert AgentToken.objects.get().project == Project.default()


def consent(client: Client) -> tuple[str, dict[str, str], str]:
    client_id = register(client)["client_id"]
    verifier, challenge = pkce()
    return client_id, authorization(client_id, challenge), verifier


def test_the_consent_page_offers_the_persons_projects(world: World) -> None:
    root = as_(world, "root")
    _, params, _ = consent(root)
    page = root.get("/oauth/authorize/", params).text
    assert '<select id="consent-project" name="project">' in page
    default = Project.default()
    assert f'<option value="{default.pk}" selected>default</option>' in page
    assert f'<option value="{world.web.pk}">web</option>' in page
    # An answerer of web only is offered web, and it is preselected.
    ann = as_(world, "ann")
    _, params, _ = consent(ann)
    page = ann.get("/oauth/authorize/", params).text
    assert f'<option value="{world.web.pk}" selected>web</option>' in page
    assert ">default</option>" not in page


def test_a_signed_in_agent_works_in_the_project_chosen(world: World) -> None:
    root = as_(world, "root")
    client_id, params, verifier = consent(root)
    code = allow(root, {**params, "project": str(world.ops.pk)})
    access = exchange(Client(), client_id, code, verifier).json()["access_token"]
    agent = oauth.authenticate(access, "http://testserver/mcp")
    assert agent is not None
    assert agent.project == world.ops
    assert agent.name == "root's Claude Code"


def test_a_project_the_person_may_not_choose_gets_no_code(world: World) -> None:
    ann = as_(world, "ann")
    _, params, _ = consent(ann)
    response = ann.post("/oauth/authorize/", {**params, "allow": "Authorize", "project": str(world.ops.pk)})
    assert response.status_code == 400
    assert "project: choose one of your projects" in response.text
    assert not get_grant_model().objects.exists()
    assert made_by(world, "ann") == []


def test_a_viewer_is_told_they_cannot_sign_an_agent_in(world: World) -> None:
    vic = as_(world, "vic")
    _, params, _ = consent(vic)
    page = vic.get("/oauth/authorize/", params).text
    assert "needs the answerer role in a project, and you have it in none" in page
    assert 'name="allow"' not in page
    response = vic.post("/oauth/authorize/", {**params, "allow": "Authorize"})
    assert response.status_code == 400
    assert not get_grant_model().objects.exists()


def test_the_dashboard_offers_a_token_only_to_who_may_make_one(world: World) -> None:
    assert "Create an agent token for me" in as_(world, "ann").get("/").text
    viewer = as_(world, "vic").get("/").text
    assert "Create an agent token for me" not in viewer
    assert "Connecting an agent of your own needs the answerer role in a project" in viewer
