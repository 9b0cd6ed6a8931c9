"""A person's reusable replies: the page that manages them, and what the answer pages offer."""

from __future__ import annotations

import json

from django.contrib.auth.models import User
from django.test import Client

from questions import replies
from questions.models import Question, SavedReply
from tokens.models import AgentToken


def test_it_needs_a_login(client: Client, db: None) -> None:
    response = client.get("/replies/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert client.post("/replies/add", {"text": "LGTM"}).status_code == 302
    assert not SavedReply.objects.exists()


def test_it_saves_a_reply_and_lists_it(logged_in: Client, user: User) -> None:
    response = logged_in.post("/replies/add", {"text": "  Ship it, then watch the error rate.  "})
    assert response.status_code == 200
    assert [r.text for r in SavedReply.objects.filter(user=user)] == ["Ship it, then watch the error rate."]
    assert "Ship it, then watch the error rate." in logged_in.get("/replies/").content.decode()


def test_it_rejects_a_reply_saved_twice_or_empty_naming_the_field(logged_in: Client, user: User) -> None:
    logged_in.post("/replies/add", {"text": "LGTM"})
    again = logged_in.post("/replies/add", {"text": "LGTM"}, headers={"HX-Request": "true"})
    assert again.status_code == 422
    assert "You have saved this reply already." in again.content.decode()
    empty = logged_in.post("/replies/add", {"text": "   "}, headers={"HX-Request": "true"})
    assert empty.status_code == 422
    assert 'role="alert">This field is required.' in empty.content.decode()
    assert SavedReply.objects.filter(user=user).count() == 1


def test_it_rejects_one_past_the_limit(logged_in: Client, user: User) -> None:
    SavedReply.objects.bulk_create(SavedReply(user=user, text=f"reply {n}") for n in range(replies.MAX_SAVED))
    response = logged_in.post("/replies/add", {"text": "one more"})
    assert response.status_code == 422
    assert f"At most {replies.MAX_SAVED} saved replies" in response.content.decode()
    assert SavedReply.objects.filter(user=user).count() == replies.MAX_SAVED


def test_it_deletes_only_ones_own(logged_in: Client, user: User) -> None:
    bob = User.objects.create_user("bob", password="pw-bob-12345")
    mine = SavedReply.objects.create(user=user, text="mine")
    his = SavedReply.objects.create(user=bob, text="bob's own reply")
    assert logged_in.post(f"/replies/{his.pk}/delete").status_code == 404
    assert logged_in.get(f"/replies/{mine.pk}/delete").status_code == 405
    assert logged_in.post(f"/replies/{mine.pk}/delete").status_code == 200
    assert list(SavedReply.objects.values_list("text", flat=True)) == ["bob's own reply"]
    assert "bob&#x27;s own reply" not in logged_in.get("/replies/").content.decode()


def test_the_answer_pages_offer_ones_saved_and_recent_replies(
    logged_in: Client, user: User, agent: tuple[AgentToken, str]
) -> None:
    token = agent[0]
    SavedReply.objects.create(user=user, text="LGTM")
    for text in ("first typed", "second typed", "LGTM"):
        Question.ask(asker=token, asker_name="agent-a", text=f"Q {text}?", options=[])[0].record_answer(
            text, by_user=user
        )
    chosen = Question.ask(asker=token, asker_name="agent-a", text="Pick?", options=[{"value": "a", "label": "A"}])[0]
    chosen.record_answer(option="a", by_user=user)  # a choice is no reply of one's own words
    pending = Question.ask(asker=token, asker_name="agent-a", text="Still open?", options=[])[0]

    for page in (logged_in.get("/"), logged_in.get(f"/questions/{pending.pk}/")):
        html = page.content.decode()
        block = html.split('<script id="my-replies" type="application/json">', 1)[1].split("</script>", 1)[0]
        assert json.loads(block) == {"saved": ["LGTM"], "recent": ["second typed", "first typed"]}


def test_another_persons_replies_are_not_offered(logged_in: Client, agent: tuple[AgentToken, str]) -> None:
    bob = User.objects.create_user("bob", password="pw-bob-12345")
    SavedReply.objects.create(user=bob, text="bob's secret reply")
    question = Question.ask(asker=agent[0], asker_name="agent-a", text="Yours?", options=[])[0]
    question.record_answer("bob's typed answer", by_user=bob)
    html = logged_in.get("/").content.decode()
    assert "bob&#x27;s secret reply" not in html
    assert "bob's secret reply" not in html
    assert "typed answer" not in html
