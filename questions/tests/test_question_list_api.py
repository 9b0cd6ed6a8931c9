"""GET /api/questions: newest first, a page at a time; an agent token sees only its own questions."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from questions.models import Question
from tokens.models import AgentToken, Scope


@pytest.fixture
def tokens(db: None) -> dict[str, tuple[AgentToken, str]]:
    return {
        "a": AgentToken.issue("agent-a"),
        "b": AgentToken.issue("agent-b"),
        "bot": AgentToken.issue("answer-bot", scope=Scope.ANSWER),
    }


def ask(token: AgentToken, text: str) -> Question:
    return Question.ask(asker=token, asker_name=token.name, text=text, options=[])[0]


def listing(client: Client, raw: str, query: str = "") -> dict[str, Any]:
    response = client.get(f"/api/questions{query}", headers={"Authorization": f"Bearer {raw}"})
    assert response.status_code == 200, response.content
    return dict(response.json())


def texts(body: dict[str, Any]) -> list[str]:
    return [q["question"] for q in body["questions"]]


def test_an_agent_token_lists_only_its_own_questions(client: Client, tokens: dict[str, Any]) -> None:
    ask(tokens["a"][0], "A's question?")
    ask(tokens["b"][0], "B's question?")
    assert texts(listing(client, tokens["a"][1])) == ["A's question?"]
    assert texts(listing(client, tokens["b"][1])) == ["B's question?"]
    assert set(texts(listing(client, tokens["bot"][1]))) == {"A's question?", "B's question?"}


def test_it_lists_newest_first_and_pages_with_a_cursor_until_next_is_null(
    client: Client, tokens: dict[str, Any]
) -> None:
    for n in range(7):
        ask(tokens["a"][0], f"Question {n}?")
    first = listing(client, tokens["a"][1], "?limit=3")
    assert texts(first) == ["Question 6?", "Question 5?", "Question 4?"]
    assert first["next"].startswith("/api/questions?limit=3&cursor=")
    ask(tokens["a"][0], "Asked meanwhile?")  # a new question does not shift the pages
    second = listing(client, tokens["a"][1], first["next"].removeprefix("/api/questions"))
    assert texts(second) == ["Question 3?", "Question 2?", "Question 1?"]
    third = listing(client, tokens["a"][1], second["next"].removeprefix("/api/questions"))
    assert (texts(third), third["next"]) == (["Question 0?"], None)


def test_the_cursor_keeps_the_status_filter(client: Client, tokens: dict[str, Any]) -> None:
    for n in range(3):
        ask(tokens["a"][0], f"Pending {n}?")
    ask(tokens["a"][0], "Answered?").record_answer("yes", by_token=tokens["a"][0])
    first = listing(client, tokens["bot"][1], "?status=pending&limit=2")
    assert "status=pending" in first["next"]
    second = listing(client, tokens["bot"][1], first["next"].removeprefix("/api/questions"))
    assert texts(first) + texts(second) == ["Pending 2?", "Pending 1?", "Pending 0?"]


@pytest.mark.parametrize(
    ("query", "field"),
    [("?limit=0", "limit"), ("?limit=501", "limit"), ("?limit=ten", "limit"), ("?cursor=bm9wZQ", "cursor"),
     ("?cursor=%%%", "cursor"), ("?status=lost", "status")],
)  # fmt: skip
def test_a_bad_parameter_gets_an_error_naming_it(
    client: Client, tokens: dict[str, Any], query: str, field: str
) -> None:
    response = client.get(f"/api/questions{query}", headers={"Authorization": f"Bearer {tokens['a'][1]}"})
    assert response.status_code == 400
    assert response.json()["field"] == field
