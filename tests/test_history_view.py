from __future__ import annotations

from django.test import Client

from questions.models import CancelReason, Question
from tokens.models import AgentToken


def make(token: AgentToken, text: str) -> Question:
    return Question.ask(asker=token, asker_name=token.name, text=text, options=[])[0]


def test_it_lists_answered_cancelled_and_timed_out_questions(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    token = agent[0]
    make(token, "Answered one?").record_answer("Yes indeed", by_token=token)
    make(token, "Cancelled one?").cancel(CancelReason.CLIENT_DISCONNECTED)
    make(token, "Timed out one?").time_out()
    make(token, "Still pending?")

    page = logged_in.get("/history/").content.decode()
    assert "Answered one?" in page
    assert "Yes indeed" in page
    assert "Cancelled one?" in page
    assert "client disconnected" in page
    assert "Timed out one?" in page
    assert "Still pending?" not in page


def test_it_filters_by_outcome(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    token = agent[0]
    make(token, "Answered one?").record_answer("Yes", by_token=token)
    make(token, "Timed out one?").time_out()
    page = logged_in.get("/history/?status=timed_out").content.decode()
    assert "Timed out one?" in page
    assert "Answered one?" not in page


def test_an_htmx_request_gets_only_the_table(logged_in: Client, db: None) -> None:
    response = logged_in.get("/history/", headers={"HX-Request": "true"})
    assert response.text.lstrip().startswith('<div id="history-table">')
    assert "<html" not in response.text


def test_it_shows_a_chosen_options_label(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    token = agent[0]
    options = [{"value": "keep", "label": "Keep the table"}, {"value": "drop", "label": "Drop it"}]
    question = Question.ask(asker=token, asker_name=token.name, text="Drop invoices?", options=options)[0]
    question.record_answer(option="keep", by_token=token)
    assert "Keep the table (keep)" in logged_in.get("/history/").content.decode()
