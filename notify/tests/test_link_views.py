"""A signed one-question link (issue 30 point 1): its page, its answer, and every way it is refused."""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import signing
from django.test import Client

from notify.webhook import signed_headers
from questions import links
from questions.models import Question, Status
from tokens.models import AgentToken


@pytest.fixture
def asked(agent: tuple[AgentToken, str]) -> Question:
    options = [{"value": "blue", "label": "Blue"}, {"value": "green", "label": "Green"}]
    return Question.ask(asker=agent[0], asker_name="agent-a", text="Which **colour** for the logo?", options=options)[0]


def path_of(url: str) -> str:
    return url.split("127.0.0.1:8000", 1)[-1] if "://" in url else url


def link(question: Question, recipient: str = "alice@example.com", **kw: str) -> str:
    return path_of(links.url(question.pk, recipient, **kw))


def test_the_link_opens_the_question_alone_with_its_form_and_answers_nothing(client: Client, asked: Question) -> None:
    page = client.get(link(asked))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Which <strong>colour</strong> for the logo?" in html
    assert 'value="blue"' in html
    assert "Send answer" in html
    assert "ws-connect" not in html, "no live socket: the link shows one question, nothing else"
    assert 'href="/history/"' not in html
    assert Question.objects.get(pk=asked.pk).status == Status.PENDING, "a GET never answers"


def test_a_per_option_link_opens_with_that_option_chosen_and_unsent(client: Client, asked: Question) -> None:
    html = client.get(link(asked, option="green")).content.decode()
    assert re.search(r'value="green"\s+checked', html)
    assert Question.objects.get(pk=asked.pk).status == Status.PENDING


def test_the_pages_post_answers_as_the_recipient_via_the_link(client: Client, asked: Question) -> None:
    url = link(asked)
    client.get(url)  # the page sets the CSRF cookie a browser would send back
    answered = client.post(url + "answer", {"option": "green"})
    assert answered.status_code == 200
    assert "Sent" in answered.content.decode()
    answer = Question.objects.get(pk=asked.pk).answer
    assert (answer.option, answer.answered_by, answer.source) == ("green", "alice@example.com (via link)", "link")


def test_the_post_is_csrf_protected(asked: Question) -> None:
    strict = Client(enforce_csrf_checks=True)
    assert strict.post(link(asked) + "answer", {"option": "green"}).status_code == 403
    assert Question.objects.get(pk=asked.pk).status == Status.PENDING


def test_a_tampered_link_shows_no_form(client: Client, asked: Question) -> None:
    good = link(asked)
    token = good.split("/q/", 1)[1].rstrip("/")
    bad = f"/q/{token[:-3]}{'abc' if not token.endswith('abc') else 'xyz'}/"
    for response in (client.get(bad), client.post(bad + "answer", {"option": "blue"}), client.get("/q/nonsense/")):
        assert response.status_code == 404
        html = response.content.decode()
        assert "This link does not work" in html
        assert "<form" not in html.split("<main", 1)[1]
    assert Question.objects.get(pk=asked.pk).status == Status.PENDING


def test_an_expired_link_shows_no_form(client: Client, asked: Question, settings: Any) -> None:
    url = link(asked)
    settings.HOOKBRIDGE_LINK_MAX_AGE = -1
    for response in (client.get(url), client.post(url + "answer", {"option": "blue"})):
        assert response.status_code == 410
        assert "This link has expired" in response.content.decode()
        assert "<form" not in response.content.decode().split("<main", 1)[1]
    assert Question.objects.get(pk=asked.pk).status == Status.PENDING


def test_a_link_to_a_resolved_question_says_who_answered_what_and_takes_no_answer(
    client: Client, asked: Question, agent: tuple[AgentToken, str]
) -> None:
    url = link(asked)
    asked.record_answer(option="blue", by_name="bob")
    response = client.get(url)
    assert response.status_code == 410
    html = response.content.decode()
    assert "“Which colour for the logo?” no longer waits" in html
    assert "was answered by bob: Blue" in html
    assert "<form" not in html.split("<main", 1)[1]
    late = client.post(url + "answer", {"option": "green"})
    assert late.status_code == 410
    assert Question.objects.get(pk=asked.pk).answer.option == "blue", "the first answer stands"


def test_a_link_for_another_salt_or_a_forged_payload_is_refused(client: Client, asked: Question) -> None:
    other = signing.dumps({"q": str(asked.pk), "to": "x"}, salt="something.else", compress=True)
    assert client.get(f"/q/{other}/").status_code == 404
    no_question = signing.dumps({"to": "x"}, salt=links.SALT, compress=True)
    assert client.get(f"/q/{no_question}/").status_code == 404


def test_with_links_needing_a_login_the_link_asks_for_one_first(
    client: Client, asked: Question, user: User, settings: Any
) -> None:
    settings.HOOKBRIDGE_LINKS_NEED_LOGIN = True
    url = link(asked)
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/q/")
    client.force_login(user)
    assert client.get(url).status_code == 200
    client.post(url + "answer", {"option": "green"})
    assert Question.objects.get(pk=asked.pk).answer.answered_by == "alice (via link)"


def test_a_refused_answer_keeps_what_was_typed_and_names_the_problem(
    client: Client, agent: tuple[AgentToken, str], settings: Any
) -> None:
    settings.HOOKBRIDGE_MAX_ANSWER_LENGTH = 10
    open_question = Question.ask(asker=agent[0], asker_name="agent-a", text="Why?", options=[])[0]
    response = client.post(link(open_question) + "answer", {"answer": "neither, really"})
    assert response.status_code == 422
    html = response.content.decode()
    assert "neither, really</textarea>" in html
    assert "The answer is longer than 10 characters." in html
    assert Question.objects.get(pk=open_question.pk).status == Status.PENDING


def test_the_dashboard_card_offers_its_link(logged_in: Client, asked: Question) -> None:
    html = logged_in.get("/").content.decode()
    found = re.search(r'data-copy="(http://[^"]+/q/[^"]+/)"', html)
    assert found, "the card has a Copy link control"
    assert links.read(found.group(1).rsplit("/q/", 1)[1].rstrip("/")).question_id == asked.pk


def test_a_webhook_post_is_signed_only_with_a_secret() -> None:
    assert signed_headers(b"{}", "") == {"Content-Type": "application/json"}
    headers = signed_headers(b'{"a": 1}', "s3cret", now=1_800_000_000)
    assert headers["X-HookBridge-Timestamp"] == "1800000000"
    assert (
        headers["X-HookBridge-Signature"]
        == "sha256=" + hmac.new(b"s3cret", b'1800000000.{"a": 1}', hashlib.sha256).hexdigest()
    )


def test_an_approvals_link_decides_it_with_the_cards_own_form(client: Client, db: None) -> None:
    payload = {"tool_name": "Bash", "tool_input": {"command": "make deploy"}}
    approval = Question.ask(
        asker=None, asker_name="host", text="May it run Bash?", options=[], kind="approval", payload=payload
    )[0]
    url = link(approval)
    html = client.get(url).content.decode()
    assert "make deploy" in html
    assert 'value="allow"' in html
    assert 'value="deny"' in html
    assert client.post(url + "answer", {"behavior": "allow"}).status_code == 200
    assert Question.objects.get(pk=approval.pk).answer.data == {"behavior": "allow"}


def test_an_answer_through_a_link_is_in_the_audit_record_as_its_recipients(client: Client, asked: Question) -> None:
    from audit.models import Entry

    client.post(link(asked, "ann@example.com") + "answer", {"option": "green"})
    entry = Entry.objects.get(action="question.answered")
    assert (entry.actor_kind, entry.actor) == ("person", "ann@example.com (via link)")
    assert entry.details["source"] == "link"
