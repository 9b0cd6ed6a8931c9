"""Issue 31: a person sees their projects' work only, and does there what their role allows.

Outsider (a member of another project), viewer, answerer, admin and superuser, on every page and API.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from questions.models import Question, Status
from testing.project_world import World, as_


def answer(client: Client, question: Question) -> int:
    return client.post(f"/questions/{question.pk}/answer", {"option": "yes"}).status_code


def test_an_outsider_gets_404_for_another_projects_question(world: World) -> None:
    web = world.questions["web"]
    outsider = as_(world, "out")
    assert outsider.get(f"/questions/{web.pk}/").status_code == 404
    assert answer(outsider, web) == 404
    assert outsider.post(f"/questions/{web.pk}/dismiss").status_code == 404
    assert outsider.post(f"/questions/{web.pk}/claim").status_code == 404
    assert Question.objects.get(pk=web.pk).status == Status.PENDING
    # Their own project's question is theirs to answer.
    assert answer(outsider, world.questions["ops"]) == 200


def test_a_viewer_sees_the_question_without_a_form_and_may_not_answer_it(world: World) -> None:
    web = world.questions["web"]
    viewer = as_(world, "vic")
    page = viewer.get(f"/questions/{web.pk}/")
    assert page.status_code == 200
    assert "Deploy web?" in page.text
    assert "You look on in web" in page.text
    assert f"/questions/{web.pk}/answer" not in page.text
    assert answer(viewer, web) == 403
    assert viewer.post(f"/questions/{web.pk}/dismiss").status_code == 403
    assert viewer.post(f"/questions/{web.pk}/claim").status_code == 403
    question = Question.objects.get(pk=web.pk)
    assert (question.status, question.claimed_by) == (Status.PENDING, "")


@pytest.mark.parametrize("name", ["ann", "adm", "root"])
def test_answerers_admins_and_superusers_answer(world: World, name: str) -> None:
    web = world.questions["web"]
    person = as_(world, name)
    page = person.get(f"/questions/{web.pk}/")
    assert f"/questions/{web.pk}/answer" in page.text
    assert answer(person, web) == 200
    assert Question.objects.get(pk=web.pk).answer.answered_by == name


@pytest.mark.parametrize(
    ("name", "sees", "hidden"),
    [
        ("vic", "Deploy web?", "Deploy ops?"),
        ("out", "Deploy ops?", "Deploy web?"),
        ("ann", "Deploy web?", "Deploy ops?"),
    ],
)
def test_the_dashboard_shows_only_the_persons_projects(world: World, name: str, sees: str, hidden: str) -> None:
    page = as_(world, name).get("/").text
    assert sees in page
    assert hidden not in page


def test_the_dashboard_counts_only_the_persons_projects(world: World) -> None:
    page = as_(world, "vic").get("/").text
    assert '<span id="pending-count" class="count" >1</span>' in page
    assert '<span id="pending-count" class="count" >2</span>' in as_(world, "root").get("/").text


def test_a_viewers_dashboard_card_has_no_answer_form(world: World) -> None:
    web = world.questions["web"]
    assert f"/questions/{web.pk}/answer" not in as_(world, "vic").get("/").text
    assert f"/questions/{web.pk}/answer" in as_(world, "ann").get("/").text


@pytest.mark.parametrize("fmt", ["", "?format=json", "?format=csv"])
def test_history_and_its_exports_hold_only_the_persons_projects(world: World, fmt: str) -> None:
    for question in world.questions.values():
        question.dismiss(by="root")
    seen = as_(world, "vic").get(f"/history/{fmt}")
    assert seen.status_code == 200
    body = seen.content.decode()
    assert "Deploy web?" in body
    assert "Deploy ops?" not in body
    everything = as_(world, "root").get(f"/history/{fmt}").content.decode()
    assert "Deploy web?" in everything
    assert "Deploy ops?" in everything


def test_session_pages_and_the_overview_hold_only_the_persons_projects(world: World) -> None:
    viewer = as_(world, "vic")
    assert viewer.get(world.sessions["web"].get_absolute_url()).status_code == 200
    assert viewer.get(world.sessions["ops"].get_absolute_url()).status_code == 404
    overview = viewer.get("/sessions/").text
    assert "web run" in overview
    assert "ops run" not in overview
    # Steering a session is an answerer's: a viewer's message is refused and none is kept.
    response = viewer.post(f"/sessions/{world.sessions['web'].guid}/messages", {"text": "stop"})
    assert response.status_code == 403
    assert not world.sessions["web"].messages.exists()


def test_hook_runs_hold_only_the_persons_projects(world: World) -> None:
    viewer = as_(world, "vic")
    assert viewer.get(f"/hooks/runs/{world.runs['web'].pk}/").status_code == 200
    assert viewer.get(f"/hooks/runs/{world.runs['ops'].pk}/").status_code == 404
    listing = viewer.get("/hooks/runs/").text
    assert "web lint" in listing
    assert "ops lint" not in listing


def bearer(world: World, name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {world.raw[name]}"}


def test_a_project_token_lists_only_its_projects_questions(world: World, client: Client) -> None:
    listed = client.get("/api/questions", headers=bearer(world, "web-bot")).json()
    assert [q["question"] for q in listed["questions"]] == ["Deploy web?"]
    everything = client.get("/api/questions", headers=bearer(world, "all-bot")).json()
    assert sorted(q["question"] for q in everything["questions"]) == ["Deploy ops?", "Deploy web?"]


def test_a_project_token_may_not_answer_another_projects_question(world: World, client: Client) -> None:
    ops = world.questions["ops"]
    body = json.dumps({"questionId": str(ops.pk), "answer": "yes"})
    refused = client.post("/api/mcp-answer", body, content_type="application/json", headers=bearer(world, "web-bot"))
    assert refused.status_code == 404
    assert Question.objects.get(pk=ops.pk).status == Status.PENDING
    refused = client.post(f"/api/questions/{ops.pk}/dismiss", headers=bearer(world, "web-bot"))
    assert refused.status_code == 404
    taken = client.post("/api/mcp-answer", body, content_type="application/json", headers=bearer(world, "all-bot"))
    assert taken.status_code == 200
    assert Question.objects.get(pk=ops.pk).status == Status.ANSWERED


def test_a_project_token_reads_only_its_projects_sessions(world: World, client: Client) -> None:
    ops = world.sessions["ops"]
    assert client.get(f"/api/sessions/{ops.guid}", headers=bearer(world, "web-bot")).status_code == 404
    assert client.get(f"/api/sessions/{ops.guid}", headers=bearer(world, "ops-bot")).status_code == 200
