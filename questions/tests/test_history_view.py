from __future__ import annotations

import json

from django.test import Client

from questions.kinds import Kind
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


def test_it_lists_newest_first_and_links_each_row_to_its_question(
    logged_in: Client, agent: tuple[AgentToken, str]
) -> None:
    token = agent[0]
    older = make(token, "Older one?")
    older.record_answer("first", by_token=token)
    newer = make(token, "Newer one?")
    newer.record_answer("second", by_token=token)
    page = logged_in.get("/history/").content.decode()
    assert page.index("Newer one?") < page.index("Older one?")
    assert f'href="/questions/{newer.pk}/"' in page


def test_it_lists_the_most_recently_asked_first_whenever_each_was_settled(
    logged_in: Client, agent: tuple[AgentToken, str]
) -> None:
    token = agent[0]
    older = make(token, "Asked first?")
    newer = make(token, "Asked second?")
    newer.record_answer("settled first", by_token=token)
    older.record_answer("settled last", by_token=token)
    page = logged_in.get("/history/").content.decode()
    assert "the most recently asked first" in page
    assert page.index("Asked second?") < page.index("Asked first?")


def approval(token: AgentToken, command: str) -> Question:
    payload = {"tool_name": "Bash", "tool_input": {"command": command}}
    return Question.ask(
        asker=token, asker_name=token.name, text=command, options=[], kind=Kind.APPROVAL, payload=payload
    )[0]


def test_it_badges_each_outcome_by_what_it_was(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    token = agent[0]
    approval(token, "rm -rf build").record_answer({"behavior": "deny", "message": "not now"}, by_token=token)
    approval(token, "ls").record_answer({"behavior": "allow"}, by_token=token)
    make(token, "Dismissed one?").dismiss(by="alice")
    make(token, "Timed out one?").time_out()
    make(token, "Answered one?").record_answer("yes", by_token=token)
    rows = logged_in.get("/history/").content.decode().split("<tr")[2:]
    badges = {row.split('class="text">', 1)[1].split("<", 1)[0]: row.split('class="outcome ', 1)[1] for row in rows}
    assert badges["rm -rf build"].startswith('outcome-denied" title="Was answered by agent-a">Denied<')
    assert badges["ls"].startswith('outcome-allowed" title="Was answered by agent-a">Allowed<')
    assert badges["Dismissed one?"].startswith('outcome-dismissed" title="Was dismissed by alice">Dismissed<')
    assert badges["Timed out one?"].startswith('outcome-timed_out" title="Timed out without an answer">Timed out<')
    assert badges["Answered one?"].startswith('outcome-answered" title="Was answered by agent-a">Answered<')


def test_it_lists_an_answers_markdown_as_plain_words(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    token = agent[0]
    make(token, "Which store?").record_answer("Use **Redis**, see `settings.py`", by_token=token)
    page = logged_in.get("/history/").content.decode()
    assert "Use Redis, see settings.py" in page
    assert "**Redis**" not in page


def test_it_lists_markdown_as_plain_words_and_escapes_the_rest(
    logged_in: Client, agent: tuple[AgentToken, str]
) -> None:
    token = agent[0]
    make(token, "Ship **now**? <script>alert(1)</script>").record_answer("yes", by_token=token)
    page = logged_in.get("/history/").content.decode()
    assert "Ship now? &lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "**now**" not in page
    assert "<script>alert(1)</script>" not in page


def test_it_marks_what_was_searched_for_and_nothing_else(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    token = agent[0]
    # The answer is markdown, as everywhere: `\&amp;` is the literal text "&amp;" (a bare one reads "&").
    make(token, "Which <b>Python</b> & which PYTHON?").record_answer("python 3.13 \\&amp;", by_token=token)
    page = logged_in.get("/history/?q=python").content.decode()
    assert "Which &lt;b&gt;<mark>Python</mark>&lt;/b&gt; &amp; which <mark>PYTHON</mark>?" in page
    assert "<mark>python</mark> 3.13 &amp;amp;" in page
    amp = logged_in.get("/history/?q=amp").content.decode()
    assert "&amp;<mark>amp</mark>;" in amp, "a hit inside the text's own entity is marked, the entity kept whole"


def test_it_finds_a_question_by_a_word_of_its_answer(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    token = agent[0]
    make(token, "Which region?").record_answer("Frankfurt, close to the users", by_token=token)
    make(token, "Which colour?").record_answer("Blue", by_token=token)
    page = logged_in.get("/history/?q=frankfurt").content.decode()
    assert "Which region?" in page
    assert "Which colour?" not in page


def test_it_filters_by_asker_and_date(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    token = agent[0]
    other, _ = AgentToken.issue("agent-b")
    make(token, "From a?").record_answer("x", by_token=token)
    make(other, "From b?").record_answer("y", by_token=other)
    page = logged_in.get("/history/?asker=agent-b").content.decode()
    assert "From b?" in page
    assert "From a?" not in page
    assert "From a?" not in logged_in.get("/history/?until=2000-01-01").content.decode()


def test_it_exports_the_filtered_rows(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    token = agent[0]
    make(token, "Kept in the export?").record_answer("yes", by_token=token)
    make(token, "Left out?").time_out()
    response = logged_in.get("/history/?status=answered&format=json")
    assert response["Content-Type"] == "application/json"
    rows = json.loads(response.content)
    assert [row["question"] for row in rows] == ["Kept in the export?"]
    csv_body = logged_in.get("/history/?status=answered&format=csv").content.decode()
    assert "Kept in the export?" in csv_body
    assert "Left out?" not in csv_body


def test_exports_need_a_login(client: Client, db: None) -> None:
    response = client.get("/history/?format=csv")
    assert response.status_code == 302
