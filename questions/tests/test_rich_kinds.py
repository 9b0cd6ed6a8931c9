"""Each kind's dashboard form and API value, the question page, dismissing, and what history shows."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from questions.models import CancelReason, Kind, Question, Status
from testing.html import assert_inert
from tokens.models import AgentToken

HOSTILE = "<script>alert(1)</script> [x](javascript:alert(2)) <img src=x onerror=alert(3)>"


def make(kind: str, text: str = "Question?", **payload: Any) -> Question:
    token = AgentToken.objects.get_or_create(name="agent-a", defaults={"token_hash": "h" * 64})[0]
    return Question.ask(asker=token, asker_name="agent-a", text=text, options=[], kind=kind, payload=payload)[0]


@pytest.fixture
def multiple_choice(db: None) -> Question:
    return make(Kind.MULTIPLE_CHOICE, questions=[{"text": "Pick", "options": ["a", "b"]}])


@pytest.fixture
def hypothesis(db: None) -> Question:
    return make(Kind.HYPOTHESIS, "Why?", title="Why?", description="d", hypotheses=["h1", "h2"])


@pytest.fixture
def choose_next(db: None) -> Question:
    options = [{"id": "x", "title": "X", "description": "xx"}, {"id": "y", "title": "Y", "description": "yy"}]
    return make(Kind.CHOOSE_NEXT, "Next?", title="Next?", description="d", options=options)


def post(client: Client, question: Question, form: dict[str, str]) -> Any:
    return client.post(f"/questions/{question.pk}/answer", form)


def test_multiple_choice_needs_a_selection_and_a_known_completion_status(
    logged_in: Client, multiple_choice: Question
) -> None:
    nothing = post(logged_in, multiple_choice, {"completionStatus": "done"})
    assert nothing.status_code == 422
    assert "Select at least one option." in nothing.text
    unknown = post(logged_in, multiple_choice, {"q0-o1": "1", "completionStatus": "later"})
    assert unknown.status_code == 422
    assert "completionStatus" in unknown.text
    assert Question.objects.get(pk=multiple_choice.pk).status == Status.PENDING
    assert post(logged_in, multiple_choice, {"q0-o1": "1", "completionStatus": "drill-deeper"}).status_code == 200
    answer = Question.objects.get(pk=multiple_choice.pk).answer
    assert answer.data["answers"][0]["selections"] == [{"option": "b", "comment": None}]
    assert answer.text == "Pick: b\nAsked for more questions."


def test_a_multiple_choice_answer_without_a_completion_status_is_done(
    logged_in: Client, multiple_choice: Question
) -> None:
    assert post(logged_in, multiple_choice, {"q0-o1": "1"}).status_code == 200
    answer = Question.objects.get(pk=multiple_choice.pk).answer
    assert answer.data["completionStatus"] == "done"
    assert answer.text == "Pick: b\nDone answering."


def test_a_hypothesis_rating_must_be_on_the_scale(logged_in: Client, hypothesis: Question) -> None:
    assert post(logged_in, hypothesis, {"h0": "8", "h1": "1"}).status_code == 422
    assert post(logged_in, hypothesis, {"h0": "0", "h1": "1"}).status_code == 422
    assert post(logged_in, hypothesis, {"h0": "7", "h1": "1"}).status_code == 200
    assert Question.objects.get(pk=hypothesis.pk).answer.text == "h1: Fully agree\nh2: Fully disagree"


def test_choose_next_refuses_an_option_it_did_not_offer(logged_in: Client, choose_next: Question) -> None:
    assert post(logged_in, choose_next, {"choice": "z"}).status_code == 422
    assert post(logged_in, choose_next, {"action": "explode"}).status_code == 422
    assert Question.objects.get(pk=choose_next.pk).status == Status.PENDING


def test_the_api_checks_a_structured_answer_and_names_the_field(choose_next: Question) -> None:
    _, raw = AgentToken.issue("bot", scope="answer")
    api = Client(headers={"Authorization": f"Bearer {raw}"})

    def send(answer: object) -> Any:
        body = json.dumps({"questionId": str(choose_next.pk), "answer": answer})
        return api.post("/api/mcp-answer", body, content_type="application/json")

    assert send("just text").json()["field"] == "answer"
    assert send({"action": "selected", "optionId": "nope"}).json()["field"] == "optionId"
    assert send(42).status_code == 400
    assert Question.objects.get(pk=choose_next.pk).status == Status.PENDING
    accepted = send({"action": "new-ideas"})
    assert accepted.status_code == 200
    assert accepted.json()["answer"]["data"] == {"action": "new-ideas", "selectedOption": None, "message": None}


@pytest.mark.parametrize(
    ("kind", "payload", "text"),
    [
        (Kind.HYPOTHESIS, {"title": "t", "description": HOSTILE, "hypotheses": ["h"]}, "t"),
        (
            Kind.CHOOSE_NEXT,
            {"title": "t", "description": HOSTILE, "options": [{"id": "a", "title": "A", "description": HOSTILE}]},
            "t",
        ),
        (Kind.HELP, {"task": HOSTILE, "reason": HOSTILE}, HOSTILE),
        (Kind.MULTIPLE_CHOICE, {"questions": [{"text": HOSTILE, "options": ["a"]}]}, HOSTILE),
    ],
)
def test_every_rich_field_renders_inert(logged_in: Client, kind: str, payload: dict[str, Any], text: str) -> None:
    question = make(kind, text, **payload)
    page = logged_in.get("/").content.decode()
    card = page[page.index(f'id="question-{question.pk}"') : page.index("</article>")]
    assert_inert(card)


def test_the_question_page_says_why_a_timed_out_question_cannot_be_answered(logged_in: Client, db: None) -> None:
    question = make(Kind.ONE_QUESTION, "Too slow?")
    question.time_out()
    page = logged_in.get(f"/questions/{question.pk}/").content.decode()
    assert "timed out" in page
    assert "can no longer be answered" in page
    assert "<form hx-post" not in page
    refused = logged_in.post(f"/questions/{question.pk}/answer", {"answer": "late"})
    assert refused.status_code == 409
    assert "timed out" in refused.text


def test_the_question_page_answers_a_pending_question(logged_in: Client, db: None) -> None:
    question = make(Kind.ONE_QUESTION, "Still open?")
    page = logged_in.get(f"/questions/{question.pk}/").content.decode()
    assert f'hx-post="/questions/{question.pk}/answer"' in page


def test_a_person_dismisses_a_help_request_once(logged_in: Client, db: None) -> None:
    question = make(Kind.HELP, "Help?", task="t", reason="r")
    first = logged_in.post(f"/questions/{question.pk}/dismiss")
    assert first.status_code == 200
    assert "will proceed on its own" in first.text
    stored = Question.objects.get(pk=question.pk)
    assert (stored.status, stored.cancel_reason, stored.dismissed_by) == (
        Status.CANCELLED,
        CancelReason.DISMISSED,
        "alice",
    )
    second = logged_in.post(f"/questions/{question.pk}/dismiss")
    assert second.status_code == 409
    assert "dismissed by alice" in second.text
    page = logged_in.get(f"/questions/{question.pk}/").content.decode()
    assert "Dismissed by alice" in page


def test_dismissing_needs_a_login(client: Client, db: None) -> None:
    question = make(Kind.HELP, "Help?", task="t", reason="r")
    assert client.post(f"/questions/{question.pk}/dismiss").status_code == 302
    assert Question.objects.get(pk=question.pk).status == Status.PENDING


def test_history_shows_every_kinds_answer_readably(
    logged_in: Client, hypothesis: Question, choose_next: Question
) -> None:
    post(logged_in, hypothesis, {"h0": "5", "h0-comment": "likely", "h1": "2"})
    post(logged_in, choose_next, {"choice": "y", "message": "go"})
    page = logged_in.get("/history/").content.decode()
    assert "h1: Somewhat agree (likely)<br>h2: Disagree" in page
    assert "Chose: Y (go)" in page


def test_choose_next_sent_with_nothing_chosen_says_so_and_stays_pending(
    logged_in: Client, choose_next: Question
) -> None:
    response = post(logged_in, choose_next, {"message": "kept"})
    assert response.status_code == 422
    assert "Choose an option, or reject them all, or ask for new ideas; then Send." in response.content.decode()
    assert "kept" in response.content.decode()
    assert Question.objects.get(pk=choose_next.pk).status == Status.PENDING
