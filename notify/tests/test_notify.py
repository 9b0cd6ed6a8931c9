"""Reaching people (issue 30): policies, the steps a question gets, sending them, Slack's button presses.

Against a fake of Slack's Web API and a local mail sink, both started here; the signatures are real.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from audit.models import Entry
from core import runtime
from lifecycle.models import AgentSession
from notify import dispatcher, health, policy, steps
from notify import slack as slack_api
from notify.models import Delivery, DeliveryAttempt, NotifyPolicy, Purpose, Status
from notify.views import too_deep
from projects.models import Project
from questions.kinds import Kind
from questions.models import Question
from testing.fakes import FakeSlack, MailSink, fake_slack, mail_sink, slack_signature
from testing.project_world import World
from tokens.models import AgentToken

SECRET = "slack-signing-secret"
OPTIONS = [{"value": "blue", "label": "Blue"}, {"value": "green", "label": "Green"}]


@pytest.fixture
def slack(settings: Any) -> Iterator[FakeSlack]:
    with fake_slack() as fake:
        settings.HOOKBRIDGE_SLACK_BOT_TOKEN = "xoxb-test"
        settings.HOOKBRIDGE_SLACK_SIGNING_SECRET = SECRET
        settings.HOOKBRIDGE_SLACK_CHANNEL = "#agents"
        settings.HOOKBRIDGE_SLACK_API_URL = fake.url
        yield fake


@pytest.fixture
def sink(settings: Any) -> Iterator[MailSink]:
    with mail_sink() as mails:
        settings.HOOKBRIDGE_EMAIL_CONFIGURED = True
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", mails.port
        settings.HOOKBRIDGE_EMAIL_TO = ["lead@example.com", "oncall@example.com"]
        yield mails


def ask(text: str = "Which colour?", options: list[dict[str, str]] | None = None, **kw: Any) -> Question:
    token = AgentToken.objects.filter(name="agent-a").first() or AgentToken.issue("agent-a")[0]
    return Question.ask(
        asker=token, asker_name="agent-a", text=text, options=OPTIONS if options is None else options, **kw
    )[0]


def dispatch() -> int:
    return asyncio.run(dispatcher.dispatch_due())


def test_a_policy_reads_as_steps_in_time_order_and_a_wrong_one_is_named() -> None:
    assert policy.parse("email@10m, slack@0s") == [policy.Step("slack", 0), policy.Step("email", 600)]
    with pytest.raises(ValueError, match="'pager@1m': the channel must be one of"):
        policy.parse("slack@0s,pager@1m")
    with pytest.raises(ValueError, match="'slack@soon' is not a step"):
        policy.parse("slack@soon")
    with pytest.raises(ValueError, match="each channel may appear once"):
        policy.parse("slack@0s,slack@5m")


@pytest.mark.django_db(transaction=True)
def test_a_question_gets_a_step_per_channel_set_up_at_its_delay(slack: FakeSlack, sink: MailSink) -> None:
    question = ask()
    steps = {d.channel: d for d in Delivery.objects.filter(question=question)}
    assert set(steps) == {"slack", "email"}
    assert steps["slack"].target == "#agents"
    assert steps["email"].target == "lead@example.com,oncall@example.com"
    assert steps["email"].due_at - question.created_at == timedelta(minutes=10)


@pytest.mark.django_db(transaction=True)
def test_a_channel_not_set_up_gets_no_step_and_a_projects_policy_wins(slack: FakeSlack, settings: Any) -> None:
    shop = Project.objects.create(name="shop")
    NotifyPolicy.objects.create(project=shop, steps="email@1m,slack@5m", slack_channel="#shop")
    token, _ = AgentToken.issue("agent-shop", project=shop)
    AgentSession.open(token=token, name="Shop run", project="shop")
    question = Question.ask(asker=token, asker_name="agent-shop", text="Refund?", options=[])[0]
    (only,) = Delivery.objects.filter(question=question)  # e-mail is not set up here: nobody to reach
    assert (only.channel, only.target, only.due_at - question.created_at) == ("slack", "#shop", timedelta(minutes=5))


@pytest.mark.django_db(transaction=True)
def test_slack_gets_one_message_with_a_button_per_option_and_its_update_once_answered(slack: FakeSlack) -> None:
    question = ask("Which **colour** for the logo?")
    assert dispatch() == 1
    (posted,) = slack.calls_of("chat.postMessage")
    assert posted["channel"] == "#agents"
    buttons = [e for block in posted["blocks"] if block["type"] == "actions" for e in block["elements"]]
    assert [b["text"]["text"] for b in buttons] == ["Blue", "Green", "Answer…"]
    assert json.loads(buttons[0]["value"]) == {"q": str(question.pk), "c": "blue"}
    assert "/q/" in buttons[2]["url"], "everything else goes through the signed link"
    assert "Which *colour* for the logo?" in json.dumps(posted["blocks"])
    sent = Delivery.objects.get(question=question, channel="slack")
    assert (sent.status, sent.posted_id != "") == (Status.SENT, True)

    question.record_answer(option="green", by_name="bob")
    assert dispatch() == 1
    (updated,) = slack.calls_of("chat.update")
    assert (updated["channel"], updated["ts"]) == (sent.posted_in, sent.posted_id)
    assert "Answered by *bob*: Green" in json.dumps(updated["blocks"])
    assert not [b for b in updated["blocks"] if b["type"] == "actions"], "no buttons any more"
    assert dispatch() == 0, "each step once"


@pytest.mark.django_db(transaction=True)
def test_an_approval_gets_allow_and_deny(slack: FakeSlack) -> None:
    payload = {"tool_name": "Bash", "tool_input": {"command": "make deploy"}}
    question = Question.ask(
        asker=None, asker_name="host", text="May it run Bash?", options=[], kind="approval", payload=payload
    )[0]
    dispatch()
    (posted,) = slack.calls_of("chat.postMessage")
    buttons = [e for block in posted["blocks"] if block["type"] == "actions" for e in block["elements"]]
    assert [(b["text"]["text"], b.get("style")) for b in buttons] == [
        ("Allow", "primary"),
        ("Deny", "danger"),
        ("Answer…", None),
    ]
    assert json.loads(buttons[1]["value"])["q"] == str(question.pk)


@pytest.mark.django_db(transaction=True)
def test_a_step_due_after_the_answer_sends_nothing(slack: FakeSlack, sink: MailSink) -> None:
    question = ask()
    dispatch()
    question.record_answer(option="blue", by_name="bob")
    Delivery.objects.filter(question=question, channel="email").update(due_at=timezone.now() - timedelta(seconds=1))
    dispatch()
    assert sink.mails == []
    assert Delivery.objects.get(question=question, channel="email").status == Status.SKIPPED


@pytest.mark.django_db(transaction=True)
def test_the_mail_carries_the_question_its_link_and_a_link_per_option(sink: MailSink) -> None:
    question = ask("Which **colour** for the logo?")
    Delivery.objects.filter(question=question, channel="email").update(due_at=timezone.now())
    assert dispatch() == 1
    mails = sink.wait_for(2)
    assert sorted(str(mail["To"]) for mail in mails) == ["lead@example.com", "oncall@example.com"]
    mail = next(m for m in mails if m["To"] == "lead@example.com")
    assert mail["Subject"] == "agent-a asks: Which colour for the logo?"
    text = mail.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    html = mail.get_body(("html",)).get_content()  # type: ignore[union-attr]
    assert "Which **colour** for the logo?" in text
    assert "<strong>colour</strong>" in html
    option_links = [
        line.split(": ", 1)[1] for line in text.splitlines() if line.strip().startswith(("Blue:", "Green:"))
    ]
    assert [urllib.parse.urlsplit(link).query for link in option_links] == ["option=blue", "option=green"]
    assert all("/q/" in link for link in option_links)
    sent = Delivery.objects.get(question=question, channel="email")
    assert (sent.status, sent.attempts) == (Status.SENT, 1)


@pytest.mark.django_db(transaction=True)
def test_a_permanent_slack_error_is_given_up_with_its_reason_and_shown(slack: FakeSlack) -> None:
    slack.errors["chat.postMessage"] = "channel_not_found"
    question = ask()
    dispatch()
    failed = Delivery.objects.get(question=question, channel="slack")
    assert (failed.status, failed.last_error) == (Status.FAILED, "Slack said channel_not_found")
    assert health.failing() == [("Slack", "Slack said channel_not_found")]
    assert "Slack delivery failing: Slack said channel_not_found" in health.banner()
    assert question.is_pending, "the ask goes on"


@pytest.mark.django_db(transaction=True)
def test_a_transient_slack_error_is_tried_again_later(slack: FakeSlack) -> None:
    slack.errors["chat.postMessage"] = "ratelimited"
    question = ask()
    dispatch()
    again = Delivery.objects.get(question=question, channel="slack")
    assert again.status == Status.DUE
    assert timedelta(seconds=4) < again.due_at - timezone.now() <= timedelta(seconds=5)
    del slack.errors["chat.postMessage"]
    Delivery.objects.filter(pk=again.pk).update(due_at=timezone.now())
    dispatch()
    assert Delivery.objects.get(pk=again.pk).status == Status.SENT
    assert [a.ok for a in DeliveryAttempt.objects.filter(delivery=again)] == [False, True]
    assert health.failing() == [], "it gets through again"


@pytest.mark.django_db(transaction=True)
def test_a_step_is_claimed_once(slack: FakeSlack) -> None:
    ask()
    first = Delivery.objects.get(channel="slack")
    second = Delivery.objects.get(pk=first.pk)  # the same row, as another worker read it
    assert first.claim()
    assert not second.claim()


def signed_post(client: Client, payload: dict[str, Any] | str, *, secret: str = SECRET, at: int | None = None) -> Any:
    """`payload` as Slack sends it, signed; a str is sent as it is."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    body = urllib.parse.urlencode({"payload": text}).encode()
    timestamp = int(time.time()) if at is None else at
    headers = {
        "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": slack_signature(secret, body, timestamp),
    }
    form = "application/x-www-form-urlencoded"
    return client.generic("POST", "/integrations/slack/actions", body, content_type=form, headers=headers)


def press(question: Question, choice: str, user: str = "U123") -> dict[str, Any]:
    sent = Delivery.objects.get(question=question, channel="slack", purpose=Purpose.NOTIFY)
    value = json.dumps({"q": str(question.pk), "c": choice})
    return {
        "type": "block_actions", "user": {"id": user, "name": "carol"},
        "container": {"channel_id": sent.posted_in, "message_ts": sent.posted_id},
        "actions": [{"action_id": "hookbridge-answer-0", "value": value}],
    }  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_signed_press_answers_as_the_person_with_that_email(client: Client, slack: FakeSlack) -> None:
    carol = User.objects.create_user("carol", email="Carol@Example.com", password="pw-carol-123")
    slack.emails["U123"] = "carol@example.com"
    question = ask()
    dispatch()
    response = signed_post(client, press(question, "green"))
    assert response.status_code == 200
    answer = Question.objects.get(pk=question.pk).answer
    assert (answer.option, answer.answered_by, answer.answered_by_user, answer.source) == (
        "green",
        "carol",
        carol,
        "slack",
    )
    recorded = Entry.objects.get(action="question.answered")
    assert (recorded.actor, recorded.actor_id, recorded.details["source"]) == ("carol", str(carol.pk), "slack")


@pytest.mark.django_db(transaction=True)
def test_where_the_channel_decides_a_press_by_someone_unknown_is_kept_under_their_slack_name(
    client: Client, slack: FakeSlack, settings: Any
) -> None:
    settings.HOOKBRIDGE_SLACK_CHANNEL_DECIDES = True
    question = ask()
    dispatch()
    assert signed_post(client, press(question, "blue")).status_code == 200
    assert Question.objects.get(pk=question.pk).answer.answered_by == "carol (Slack)"


@pytest.mark.django_db(transaction=True)
def test_a_press_by_someone_who_is_no_person_here_is_told_so_alone_and_answers_nothing(
    client: Client, slack: FakeSlack
) -> None:
    question = ask()
    dispatch()
    assert signed_post(client, press(question, "blue", user="U777")).status_code == 200
    assert Question.objects.get(pk=question.pk).is_pending
    (told,) = slack.calls_of("chat.postEphemeral")
    assert told["user"] == "U777"
    assert "not a Hook Bridge person's" in told["text"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("who", "project"), [("vic", "web"), ("out", "web"), ("ann", "ops")])
def test_a_press_answers_only_as_someone_who_may_answer_that_project(
    client: Client, slack: FakeSlack, world: World, who: str, project: str
) -> None:
    """Issue 37: vic only views web, out answers ops only, ann answers web only."""
    world.people[who].email = f"{who}@example.com"
    world.people[who].save()
    slack.emails["U500"] = f"{who}@example.com"
    question = world.questions[project]
    dispatch()
    assert signed_post(client, press(question, "yes", user="U500")).status_code == 200
    assert Question.objects.get(pk=question.pk).is_pending
    (told,) = slack.calls_of("chat.postEphemeral")
    assert f"may not answer questions of project {project}" in told["text"]
    # The same press by one of the project's answerers answers it.
    answering = {"web": "ann", "ops": "out"}[project]
    world.people[answering].email = f"{answering}@example.com"
    world.people[answering].save()
    slack.emails["U501"] = f"{answering}@example.com"
    assert signed_post(client, press(question, "yes", user="U501")).status_code == 200
    assert Question.objects.get(pk=question.pk).answer.answered_by_user == world.people[answering]


@pytest.mark.django_db(transaction=True)
def test_a_press_is_refused_politely_when_slack_says_nothing_of_the_user(client: Client, slack: FakeSlack) -> None:
    slack.replies["users.info"] = {"ok": True}  # no `user` object at all
    question = ask()
    dispatch()
    assert signed_post(client, press(question, "blue")).status_code == 200
    assert Question.objects.get(pk=question.pk).is_pending
    (told,) = slack.calls_of("chat.postEphemeral")
    assert "not a Hook Bridge person's" in told["text"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("timestamp", ["abc", "", "1e9", "-5", "9" * 40, "١٢٣"])
def test_a_malformed_timestamp_is_a_401_before_anything_is_read(
    client: Client, slack: FakeSlack, timestamp: str
) -> None:
    question = ask()
    dispatch()
    body = urllib.parse.urlencode({"payload": json.dumps(press(question, "blue"))}).encode()
    headers = {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": "v0=" + "0" * 64}
    form = "application/x-www-form-urlencoded"
    response = client.generic("POST", "/integrations/slack/actions", body, content_type=form, headers=headers)
    assert response.status_code == 401
    assert "X-Slack-Request-Timestamp" in response.text
    assert Question.objects.get(pk=question.pk).is_pending


@pytest.mark.django_db(transaction=True)
def test_a_signed_payload_nested_too_deep_is_a_400(client: Client, slack: FakeSlack) -> None:
    question = ask()
    dispatch()
    text = json.dumps(press(question, "blue"))
    response = signed_post(client, text[:-1] + ', "extra": ' + "[" * 5000 + "]" * 5000 + "}")
    assert response.status_code == 400
    assert "nests deeper than" in response.text
    assert Question.objects.get(pk=question.pk).is_pending


def test_the_nesting_check_counts_brackets_outside_strings_only() -> None:
    assert not too_deep('{"a": "[[[[[[[[[[[[", "b": "\\"}', 2)
    assert too_deep('{"a": [[{"b": 1}]]}', 3)
    assert not too_deep('{"a": [[{"b": 1}]]}', 4)


@pytest.mark.django_db(transaction=True)
def test_a_late_press_is_told_who_answered_first_to_that_user_alone(client: Client, slack: FakeSlack) -> None:
    User.objects.create_user("dan", email="dan@example.com")
    slack.emails["U999"] = "dan@example.com"
    question = ask()
    dispatch()
    question.record_answer(option="blue", by_name="bob")
    assert signed_post(client, press(question, "green", user="U999")).status_code == 200
    (told,) = slack.calls_of("chat.postEphemeral")
    assert told["user"] == "U999"
    assert "answered by bob" in told["text"]
    assert Question.objects.get(pk=question.pk).answer.option == "blue"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("change", "status"),
    [("bad signature", 401), ("stale timestamp", 401), ("unknown action", 400), ("not our message", 400),
     ("not a press", 400), ("malformed value", 400), ("user not an object", 400), ("action not an object", 400)],
)  # fmt: skip
def test_a_request_that_does_not_hold_changes_nothing(
    client: Client, slack: FakeSlack, change: str, status: int
) -> None:
    question = ask()
    dispatch()
    payload = press(question, "green")
    kw: dict[str, Any] = {}
    if change == "bad signature":
        kw["secret"] = "not-the-secret"
    elif change == "stale timestamp":
        kw["at"] = int(time.time()) - 301
    elif change == "unknown action":
        payload["actions"][0]["action_id"] = "something-else"
    elif change == "not our message":
        payload["container"]["message_ts"] = "1.000"
    elif change == "not a press":
        payload["type"] = "view_submission"
    elif change == "user not an object":
        payload["user"] = "U123"
    elif change == "action not an object":
        payload["actions"] = ["press"]
    else:
        payload["actions"][0]["value"] = "{not json"
    response = signed_post(client, payload, **kw)
    assert response.status_code == status
    assert Question.objects.get(pk=question.pk).is_pending


@pytest.mark.django_db
def test_the_admin_edits_a_projects_policy_and_refuses_a_wrong_one(client: Client) -> None:
    admin = User.objects.create_superuser("root", password="pw-root-12345")
    client.force_login(admin)
    shop = Project.objects.create(name="shop")
    form = {"project": shop.pk, "steps": "slack@0s,pager@1m", "slack_channel": "", "email_to": "", "enabled": "on"}
    refused = client.post("/admin/notify/notifypolicy/add/", form)
    assert refused.status_code == 200
    assert "the channel must be one of" in refused.content.decode()
    assert not NotifyPolicy.objects.exists()
    form["steps"] = "email@0s,slack@2m"
    assert client.post("/admin/notify/notifypolicy/add/", form).status_code == 302
    assert NotifyPolicy.objects.get().steps == "email@0s,slack@2m"


@pytest.mark.django_db(transaction=True)
async def test_the_dispatcher_sends_what_comes_due_while_it_runs(slack: FakeSlack) -> None:
    question = await database_sync_to_async(ask)()
    dispatcher.ensure_running()
    status = None
    try:
        await asyncio.to_thread(slack.wait_for, "chat.postMessage")
        # The fake hears the post while the dispatcher sends it; SENT is written just after: wait for it
        # before stopping the dispatcher.
        for _ in range(50):
            status = (await database_sync_to_async(Delivery.objects.get)(question=question, channel="slack")).status
            if status == Status.SENT:
                break
            await asyncio.sleep(0.1)
    finally:
        for channel in dispatcher.SENDERS:
            task = runtime.background_tasks.pop(dispatcher.task_name(channel), None)
            if task is not None:
                task.cancel()
    assert status == Status.SENT


@pytest.mark.django_db(transaction=True)
def test_the_questions_page_lists_where_it_was_sent_and_each_attempt(logged_in: Client, slack: FakeSlack) -> None:
    slack.errors["chat.postMessage"] = "ratelimited"
    question = ask()
    dispatch()
    html = logged_in.get(f"/questions/{question.pk}/").content.decode()
    assert "Sent to people" in html
    assert 'by slack to <span class="target">#agents</span>' in html
    assert "failed: Slack said ratelimited" in html


@pytest.mark.django_db(transaction=True)
def test_a_deny_press_on_an_approval_denies_it_saying_who(client: Client, slack: FakeSlack) -> None:
    User.objects.create_user("carol", email="carol@example.com")
    slack.emails["U123"] = "carol@example.com"
    payload = {"tool_name": "Bash", "tool_input": {"command": "rm -rf build"}}
    approval = Question.ask(
        asker=None, asker_name="host", text="May it run Bash?", options=[], kind="approval", payload=payload
    )[0]
    dispatch()
    assert signed_post(client, press(approval, "deny")).status_code == 200
    assert Question.objects.get(pk=approval.pk).answer.data == {
        "behavior": "deny",
        "message": "Denied in Slack by carol.",
    }


def lapse(step: Delivery) -> None:
    """The lease of the worker that claimed `step` runs out (it died): as if LEASE_SECONDS had passed."""
    Delivery.objects.filter(pk=step.pk).update(lease_until=timezone.now() - timedelta(seconds=1))


@pytest.mark.django_db(transaction=True)
def test_a_step_left_claimed_by_a_worker_that_went_away_is_sent_by_another(slack: FakeSlack) -> None:
    question = ask()
    step = Delivery.objects.get(question=question, channel="slack")
    assert step.claim()  # a worker took it, and died before sending
    assert dispatch() == 0, "its lease holds: nobody else takes it yet"
    lapse(step)
    assert dispatch() == 1
    assert Delivery.objects.get(pk=step.pk).status == Status.SENT
    assert len(slack.calls_of("chat.postMessage")) == 1


@pytest.mark.django_db(transaction=True)
def test_a_renewed_claim_is_kept_and_a_lost_one_is_known(slack: FakeSlack) -> None:
    question = ask()
    mine = Delivery.objects.get(question=question, channel="slack")
    theirs = Delivery.objects.get(pk=mine.pk)
    assert mine.claim(lease_seconds=0.01)
    assert mine.renew(60)
    assert not theirs.claim(), "renewed: still mine"
    lapse(mine)
    assert theirs.claim()
    assert not mine.renew(60), "taken over: the first sender hears it lost the step"


@pytest.mark.django_db(transaction=True)
def test_a_post_made_by_a_worker_that_died_is_found_not_posted_again_and_gets_its_update(slack: FakeSlack) -> None:
    question = ask()
    step = Delivery.objects.get(question=question, channel="slack")
    # An earlier post told this server the channel's ID (the look-up needs it; a name is not enough).
    Delivery.objects.filter(pk=step.pk).update(target="C0FAKEAGEN")
    step.refresh_from_db()
    assert step.claim()
    step.mark_sending()
    slack_api.post("C0FAKEAGEN", "agent-a asks: Which colour?", [], step.pk)  # Slack posted; the worker died
    lapse(step)

    assert dispatch() == 1
    assert len(slack.calls_of("chat.postMessage")) == 1, "not posted twice"
    found = Delivery.objects.get(pk=step.pk)
    assert (found.status, found.posted_id) == (Status.SENT, slack.posted[0]["ts"])
    question.record_answer(option="green", by_name="bob")
    dispatch()
    (updated,) = slack.calls_of("chat.update")
    assert (updated["channel"], updated["ts"]) == (slack.posted[0]["channel"], slack.posted[0]["ts"])


@pytest.mark.django_db(transaction=True)
def test_a_step_taken_over_whose_post_never_left_is_posted_once(slack: FakeSlack) -> None:
    question = ask()
    step = Delivery.objects.get(question=question, channel="slack")
    Delivery.objects.filter(pk=step.pk).update(target="C0FAKEAGEN")
    step.refresh_from_db()
    assert step.claim()
    step.mark_sending()  # about to post, and died before the request left
    lapse(step)
    assert dispatch() == 1
    assert len(slack.calls_of("conversations.history")) == 1, "looked first"
    assert len(slack.calls_of("chat.postMessage")) == 1


def died_posting(question: Question, channel: str = "#agents") -> Delivery:
    """`question`'s Slack step, claimed by a worker that posted it (Slack has the message) and died before it
    heard back: its lease lapsed, its row knows no ts."""
    step = Delivery.objects.get(question=question, channel="slack", purpose=Purpose.NOTIFY)
    assert step.claim()
    step.mark_sending()
    slack_api.post(channel, "agent-a asks: Which colour?", [], step.pk)
    lapse(step)
    return step


@pytest.mark.django_db(transaction=True)
def test_a_post_to_a_channel_named_by_name_is_found_through_the_channel_list_not_posted_again(
    slack: FakeSlack,
) -> None:
    """Issue 54, hole 10: the first post of a channel named by name left no ID to look it up with."""
    step = died_posting(ask())
    assert dispatch() == 1
    assert slack.calls_of("conversations.list"), "the name was looked up"
    assert len(slack.calls_of("chat.postMessage")) == 1, "not posted twice"
    assert Delivery.objects.get(pk=step.pk).posted_id == slack.posted[0]["ts"]


@pytest.mark.django_db(transaction=True)
def test_a_question_answered_while_its_post_was_in_doubt_gets_its_message_updated_once(slack: FakeSlack) -> None:
    """Issue 54, hole 10: answered before the dead worker's lease lapsed, the step was skipped unread and the
    message's buttons stayed live."""
    question = ask()
    step = died_posting(question)
    question.record_answer(option="green", by_name="bob")
    dispatch()
    dispatch()
    found = Delivery.objects.get(pk=step.pk)
    assert (found.status, found.posted_id) == (Status.SENT, slack.posted[0]["ts"])
    assert len(slack.calls_of("chat.postMessage")) == 1
    (updated,) = slack.calls_of("chat.update")
    assert updated["ts"] == slack.posted[0]["ts"]


@pytest.mark.django_db(transaction=True)
def test_a_step_in_doubt_whose_look_up_fails_is_neither_posted_nor_skipped_but_looked_up_again(
    slack: FakeSlack,
) -> None:
    question = ask()
    step = died_posting(question)
    slack.errors["conversations.list"] = "ratelimited"
    assert dispatch() == 1
    waiting = Delivery.objects.get(pk=step.pk)
    assert (waiting.status, waiting.attempts) == (Status.DUE, 1)
    assert waiting.sending_since is not None, "still in doubt"
    assert "Looking for the message a worker that died may have sent: Slack said ratelimited" in waiting.last_error
    assert len(slack.calls_of("chat.postMessage")) == 1, "not posted blind"

    question.record_answer(option="green", by_name="bob")
    del slack.errors["conversations.list"]
    Delivery.objects.filter(pk=step.pk).update(due_at=timezone.now())
    dispatch()
    dispatch()
    assert Delivery.objects.get(pk=step.pk).status == Status.SENT, "found, not skipped"
    assert len(slack.calls_of("chat.update")) == 1


@pytest.mark.django_db(transaction=True)
def test_an_update_a_dead_worker_made_is_read_back_not_made_twice(slack: FakeSlack) -> None:
    """Issue 54, hole 10: a message got two updates around a worker's SIGTERM."""
    question = ask()
    dispatch()
    question.record_answer(option="green", by_name="bob")
    update = Delivery.objects.get(question=question, purpose=Purpose.UPDATE)
    assert update.claim()
    step = dispatcher.prepared(update)  # built and marked as leaving
    assert step is not None
    step()  # Slack updated the message; the worker died before it heard back
    lapse(update)
    assert dispatch() == 1
    assert len(slack.calls_of("chat.update")) == 1, "not updated twice"
    history = slack.calls_of("conversations.history")[-1]
    assert history["latest"] == history["oldest"] == update.posted_id
    assert Delivery.objects.get(pk=update.pk).status == Status.SENT
    assert slack.messages[0]["metadata"]["event_payload"] == {
        "step": str(Delivery.objects.get(question=question, purpose=Purpose.NOTIFY, channel="slack").pk),
        "update": str(update.pk),
    }


@pytest.mark.django_db(transaction=True)
def test_an_update_whose_worker_died_before_it_left_is_made_once(slack: FakeSlack) -> None:
    question = ask()
    dispatch()
    question.record_answer(option="green", by_name="bob")
    update = Delivery.objects.get(question=question, purpose=Purpose.UPDATE)
    assert update.claim()
    update.mark_sending()  # about to update, and died before the request left
    lapse(update)
    assert dispatch() == 1
    assert len(slack.calls_of("conversations.history")) == 1, "looked first"
    assert len(slack.calls_of("chat.update")) == 1


@pytest.mark.django_db(transaction=True)
def test_a_slow_slack_holds_up_no_email(slack: FakeSlack, sink: MailSink, settings: Any) -> None:
    """Issue 37, hole 7: each channel has its own sender."""
    settings.HOOKBRIDGE_NOTIFY = "slack@0s,email@0s"
    settings.HOOKBRIDGE_EMAIL_TO = ["lead@example.com"]
    slack.delay = 1.0
    for n in range(3):
        ask(f"Question {n}?")
    sending = threading.Thread(target=dispatch)
    sending.start()
    try:
        sink.wait_for(3)
        assert len(slack.posted) < 3, "every mail is out while Slack is still on its posts"
    finally:
        sending.join(timeout=30)
    assert len(slack.calls_of("chat.postMessage")) == 3


@pytest.mark.django_db(transaction=True)
def test_an_approvals_steps_all_come_before_its_host_gives_up(slack: FakeSlack, sink: MailSink, settings: Any) -> None:
    settings.HOOKBRIDGE_NOTIFY = "slack@0s,email@10m"
    settings.HOOKBRIDGE_APPROVAL_TIMEOUT = 590
    payload = {"tool_name": "Bash", "tool_input": {"command": "make deploy"}}
    approval = ask("make deploy", options=[], kind=Kind.APPROVAL, payload=payload)
    plain = ask("Which colour, whenever?")
    assert approval.deadline == approval.created_at + timedelta(seconds=590)
    after = {
        (row.question_id, row.channel): (row.due_at - row.question.created_at).total_seconds()
        for row in Delivery.objects.select_related("question")
    }
    # The e-mail comes at 80 % of the approval's window, not after it; a question nobody gives up on keeps 10 min.
    assert after[(approval.pk, "slack")] == 0
    assert after[(approval.pk, "email")] == pytest.approx(472, abs=0.01)
    assert after[(plain.pk, "email")] == 600
    assert steps.line(approval.pk).endswith(
        "e-mail at {} (in 8 min)".format(
            timezone.localtime(approval.created_at + timedelta(seconds=472)).strftime("%H:%M")
        )
    )


@pytest.mark.django_db(transaction=True)
def test_a_step_still_to_come_reads_when_it_will_be_sent(logged_in: Client, sink: MailSink) -> None:
    question = ask()
    due_at = Delivery.objects.get(question=question, channel="email").due_at
    html = logged_in.get(f"/questions/{question.pk}/").content.decode()
    when = timezone.localtime(due_at).strftime("%H:%M:%S")
    assert f'to be sent at <time datetime="{due_at.isoformat()}">{when}</time>' in html
    assert "due, due" not in html


@pytest.mark.django_db(transaction=True)
def test_an_approval_policy_s_escalation_reaches_the_project_s_admins_by_mail(sink: MailSink, settings: Any) -> None:
    """Issue 53: a policy's `escalate` replaces the project's steps; `admins` mails them; an on-call step whose
    schedule does not exist (yet) reaches nobody (and is said so when the file is applied)."""
    from django.contrib.auth.models import User

    from projects.models import Project, Role

    settings.HOOKBRIDGE_NOTIFY = "email@0s"
    settings.HOOKBRIDGE_EMAIL_TO = ["lead@example.com"]
    shop = Project.objects.create(name="shop")
    shop.set_member(User.objects.create_user("adm", email="adm@example.com"), Role.ADMIN)
    shop.set_member(User.objects.create_user("ann", email="ann@example.com"), Role.ANSWERER)
    needs = {"policy": "the policy 'pushes'", "quorum": 2, "escalate": [
        {"after": 0, "notify": "admins"}, {"after": 300, "notify": "on-call:backend"}]}  # fmt: skip
    payload = {"tool_name": "Bash", "tool_input": {"command": "git push"}}
    question = ask("git push", options=[], kind=Kind.APPROVAL, payload=payload, project=shop, requirement=needs)
    steps = list(Delivery.objects.filter(question=question).values_list("channel", "target"))
    assert steps == [("email", "adm@example.com")]
    assert dispatch() == 1
    assert sink.wait_for(1)[0]["To"] == "adm@example.com"


@pytest.mark.django_db(transaction=True)
def test_an_on_call_step_mails_whoever_is_on_call_when_it_is_due(sink: MailSink, settings: Any) -> None:
    """Issue 53: `on-call:backend` reaches the person the schedule has on call when the step is due: across a
    hand-off between the ask and the step, the next person; an override for that shift, its person."""
    from datetime import time as clock

    from projects.models import OnCallOverride, OnCallSchedule, OnCallTurn, Project, Role

    settings.HOOKBRIDGE_NOTIFY = "email@0s"
    settings.HOOKBRIDGE_EMAIL_TO = ["lead@example.com"]
    shop = Project.objects.create(name="shop")
    people = {}
    for name in ("ann", "bob", "cat"):
        people[name] = User.objects.create_user(name, email=f"{name}@example.com")
        shop.set_member(people[name], Role.ANSWERER)
    # Daily shifts, ann's now; the hand-off comes an hour after the ask, so a step due in two hours is bob's.
    handoff = (timezone.now() + timedelta(hours=1)).astimezone(timezone.get_fixed_timezone(0))
    schedule = OnCallSchedule(project=shop, name="backend", handoff=clock(handoff.hour, handoff.minute),
                              time_zone="UTC", rotation_days=1)  # fmt: skip
    schedule.starts_on = schedule.shift_day()
    schedule.save()
    for i, name in enumerate(["ann", "bob"]):
        OnCallTurn.objects.create(schedule=schedule, user=people[name], position=i)
    assert schedule.on_call() == people["ann"]
    needs = {"policy": "the policy 'pushes'", "quorum": 1, "escalate": [
        {"after": 0, "notify": "on-call:backend"}, {"after": 7200, "notify": "on-call:backend"}]}  # fmt: skip
    payload = {"tool_name": "Bash", "tool_input": {"command": "git push"}}
    question = ask("git push", options=[], kind=Kind.APPROVAL, payload=payload, project=shop, requirement=needs)
    assert sorted(Delivery.objects.filter(question=question).values_list("channel", "target")) == [
        ("email", "ann@example.com"),
        ("email", "bob@example.com"),
    ]
    assert dispatch() == 1
    assert sink.wait_for(1)[0]["To"] == "ann@example.com"

    OnCallOverride.objects.create(schedule=schedule, day=schedule.shift_day(), user=people["cat"], reason="swap")
    later = ask("git push -f", options=[], kind=Kind.APPROVAL, payload=payload, project=shop, requirement=needs)
    firsts = Delivery.objects.filter(question=later, due_at=later.created_at).values_list("target", flat=True)
    assert list(firsts) == ["cat@example.com"]


@pytest.mark.django_db(transaction=True)
def test_an_on_call_step_naming_no_schedule_reaches_nobody_and_the_others_still_go(
    sink: MailSink, settings: Any
) -> None:
    from projects.models import Project, Role

    settings.HOOKBRIDGE_NOTIFY = "email@0s"
    settings.HOOKBRIDGE_EMAIL_TO = ["lead@example.com"]
    shop = Project.objects.create(name="shop")
    shop.set_member(User.objects.create_user("adm", email="adm@example.com"), Role.ADMIN)
    needs = {"policy": "the policy 'pushes'", "quorum": 1, "escalate": [
        {"after": 0, "notify": "on-call:nosuch"}, {"after": 0, "notify": "admins"}]}  # fmt: skip
    payload = {"tool_name": "Bash", "tool_input": {"command": "git push"}}
    question = ask("git push", options=[], kind=Kind.APPROVAL, payload=payload, project=shop, requirement=needs)
    assert list(Delivery.objects.filter(question=question).values_list("target", flat=True)) == ["adm@example.com"]
