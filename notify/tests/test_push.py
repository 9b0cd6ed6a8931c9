"""Web Push (issue 42): turning it on in a browser, the `push` step, its Allow and Deny, and its outcome.

Against a push service the test starts (testing.fakes.FakePushService): it takes a push only with a VAPID
signature that holds, and decrypts every payload with the subscription's own keys, as a browser would.
"""

from __future__ import annotations

import asyncio
import base64
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from py_vapid import Vapid02

from audit.models import Entry
from notify import dispatcher, policy, push, runtime, steps
from notify.models import Delivery, DeliveryAttempt, Purpose, PushSubscription, Status
from projects.models import Role
from questions.models import Question
from testing.fakes import FakePushService, fake_push_service
from testing.project_world import World

BASH = {"tool_name": "Bash", "tool_input": {"command": "npm run deploy"}}


@pytest.fixture
def service(settings: Any, tmp_path: Path) -> Iterator[FakePushService]:
    with fake_push_service() as fake:
        settings.HOOKBRIDGE_PUSH_SERVICES = [fake.url]
        settings.HOOKBRIDGE_VAPID_KEY_FILE = tmp_path / "vapid_private_key.pem"
        settings.HOOKBRIDGE_EMAIL_FROM = "agents@example.com"
        runtime.vapid = None
        yield fake
        runtime.vapid = None


FIREFOX_ON_ANDROID = "Mozilla/5.0 (Android 14; Mobile; rv:132.0) Gecko/132.0 Firefox/132.0"
SAFARI_ON_IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/18.1 Mobile/15E148 Safari/604.1"
)
CHROME_ON_LINUX = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)


def subscribe(client: Client, subscription: dict[str, Any], device: str = FIREFOX_ON_ANDROID) -> Any:
    return client.post(
        "/push/subscriptions", json.dumps(subscription), content_type="application/json", HTTP_USER_AGENT=device
    )


def dispatch() -> int:
    return asyncio.run(dispatcher.dispatch_due())


def as_person(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def approval(world: World, project: str = "web") -> Question:
    token = world.tokens[project]
    return Question.ask(
        asker=token, asker_name=token.name, text="May it run Bash?", options=[], kind="approval", payload=BASH
    )[0]


def act(token: str, action: str) -> Any:
    return Client().post("/push/act", {"token": token, "action": action})


@pytest.mark.django_db
def test_a_browsers_subscription_is_kept_for_the_person_who_posted_it(world: World, service: FakePushService) -> None:
    ann = as_person(world.people["ann"])
    browser = service.subscribe()
    response = subscribe(ann, browser)
    assert response.status_code == 201, response.content
    kept = PushSubscription.objects.get()
    assert (kept.user, kept.endpoint, kept.p256dh, kept.auth) == (
        world.people["ann"], browser["endpoint"], browser["keys"]["p256dh"], browser["keys"]["auth"],
    )  # fmt: skip
    assert kept.device == "Firefox on Android", "named as its person would name it, not by its User-Agent"
    # The same browser again, with someone else signed in on it: one subscription, now theirs.
    assert subscribe(as_person(world.people["adm"]), browser).status_code == 200
    assert PushSubscription.objects.get().user == world.people["adm"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "endpoint",
    [
        "https://evil.example/push/1",
        "https://evil.example/fcm.googleapis.com/fcm/send/1",
        "http://fcm.googleapis.com/fcm/send/1",
        "https://fcm.googleapis.com:8443/fcm/send/1",
        "https://user:pw@fcm.googleapis.com/fcm/send/1",
        "https://notify.windows.com.evil.example/w/1",
        "http://127.0.0.1:9/push/1",
        "javascript:alert(1)",
    ],
)
def test_an_endpoint_on_no_listed_push_service_is_refused_naming_it_and_nothing_is_kept(
    world: World, settings: Any, endpoint: str
) -> None:
    settings.HOOKBRIDGE_PUSH_SERVICES = ["fcm.googleapis.com", "*.notify.windows.com"]
    good = FakePushService().subscribe()
    response = subscribe(as_person(world.people["ann"]), {**good, "endpoint": endpoint})
    assert response.status_code == 422
    assert response.json()["field"] == "endpoint"
    assert not PushSubscription.objects.exists()


@pytest.mark.django_db
def test_the_browsers_own_push_services_are_taken_by_default(world: World) -> None:
    good = FakePushService().subscribe()
    ann = as_person(world.people["ann"])
    for endpoint in [
        "https://fcm.googleapis.com/fcm/send/abc:APA91b",
        "https://updates.push.services.mozilla.com/wpush/v2/gAAAA",
        "https://web.push.apple.com/QGx1",
        "https://wns2-par02p.notify.windows.com/w/?token=BQYAAA",
    ]:
        assert subscribe(ann, {**good, "endpoint": endpoint}).status_code == 201, endpoint
    assert PushSubscription.objects.count() == 4


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("keys", "field"),
    [
        ({"p256dh": "not base64!", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}, "keys.p256dh"),
        ({"p256dh": "BAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}, "keys.p256dh"),
        ({"auth": "AAAAAAAAAAAAAAAAAAAAAA"}, "keys.p256dh"),
        (None, "keys.auth"),
    ],
)
def test_keys_that_are_no_browsers_are_refused_naming_the_key(
    world: World, service: FakePushService, keys: dict[str, str] | None, field: str
) -> None:
    browser = service.subscribe()
    if keys is None:
        browser["keys"]["auth"] = browser["keys"]["auth"][:10]
    else:
        browser["keys"] = keys
    response = subscribe(as_person(world.people["ann"]), browser)
    assert (response.status_code, response.json()["field"]) == (422, field)
    assert not PushSubscription.objects.exists()


@pytest.mark.django_db
def test_a_body_that_is_no_subscription_is_a_400_and_a_stranger_is_sent_to_log_in(world: World) -> None:
    ann = as_person(world.people["ann"])
    response = ann.post("/push/subscriptions", "[1, 2]", content_type="application/json")
    assert response.status_code == 400
    assert "PushSubscription" in response.json()["error"]
    anonymous = Client().post("/push/subscriptions", "{}", content_type="application/json")
    assert anonymous.status_code == 302
    assert "/accounts/login/" in anonymous["Location"]


@pytest.mark.django_db
def test_a_person_sees_their_browsers_and_turns_one_off_but_never_anothers(
    world: World, service: FakePushService
) -> None:
    ann, adm = as_person(world.people["ann"]), as_person(world.people["adm"])
    subscribe(ann, service.subscribe(), device=CHROME_ON_LINUX)
    subscribe(adm, service.subscribe(), device=SAFARI_ON_IPHONE)
    page = ann.get("/notifications/").content.decode()
    assert "Chrome on Linux" in page
    assert "Safari on an iPhone" not in page
    assert push.application_server_key() in page
    theirs = PushSubscription.objects.get(user=world.people["adm"])
    assert ann.post(f"/push/subscriptions/{theirs.pk}/delete").status_code == 404
    mine = PushSubscription.objects.get(user=world.people["ann"])
    assert ann.post(f"/push/subscriptions/{mine.pk}/delete").status_code == 302
    assert list(PushSubscription.objects.values_list("user__username", flat=True)) == ["adm"]


@pytest.mark.django_db(transaction=True)
def test_a_question_is_pushed_to_each_browser_of_those_who_may_answer_it_signed_and_encrypted(
    world: World, service: FakePushService
) -> None:
    people = world.people
    for name in ("ann", "ann", "vic", "out", "adm"):  # ann on two browsers; vic only views web; out is in ops
        subscribe(as_person(people[name]), service.subscribe())
    question = Question.ask(
        asker=world.tokens["web"], asker_name="web-agent", text="Which **region**?",
        options=[{"value": "eu", "label": "EU"}],
    )[0]  # fmt: skip
    assert dispatch() == 3
    pushed = service.wait_for(3)
    reached = {PushSubscription.objects.get(endpoint__endswith=p.subscription).user.username for p in pushed}
    assert reached == {"ann", "adm"}
    claims = pushed[0].claims
    assert claims["sub"] == "mailto:agents@example.com"
    assert claims["aud"] == service.url
    shown = pushed[0].payload
    assert shown["tag"] == f"question-{question.pk}", "the tag of the dashboard tab's own notification"
    assert (shown["title"], shown["body"]) == ("web-agent asks · web-app", "Which **region**?")
    assert shown["actions"] == [{"action": "open", "title": "Open"}]
    assert shown["url"] == f"/questions/{question.pk}/"
    assert pushed[0].headers["urgency"] == "high"
    assert steps.line(question.pk) == "Push: sent (3 browsers)"
    assert set(Delivery.objects.values_list("status", flat=True)) == {Status.SENT}
    assert PushSubscription.objects.filter(last_sent_at__isnull=False).count() == 3


@pytest.mark.django_db(transaction=True)
def test_an_approvals_allow_answers_the_agent_as_that_person_once(world: World, service: FakePushService) -> None:
    subscribe(as_person(world.people["ann"]), service.subscribe())
    question = approval(world)
    dispatch()
    (pushed,) = service.wait_for(1)
    assert [a["action"] for a in pushed.payload["actions"]] == ["allow", "deny"]
    assert Client().get("/push/act", {"token": pushed.payload["token"], "action": "allow"}).status_code == 405
    response = act(pushed.payload["token"], "allow")
    assert response.status_code == 200, response.content
    answer = Question.objects.get(pk=question.pk).answer
    assert (answer.answered_by, answer.answered_by_user, answer.source) == ("ann", world.people["ann"], "push")
    assert answer.data == {"behavior": "allow"}
    recorded = Entry.objects.get(action="approval.decided")
    assert (recorded.actor, recorded.details["source"]) == ("ann", "push")
    again = act(pushed.payload["token"], "deny")
    assert again.status_code == 409
    assert "Already decided" in again.json()["error"]
    assert Entry.objects.filter(action="approval.decided").count() == 1, "a refused second press records nothing"


@pytest.mark.django_db(transaction=True)
def test_a_deny_says_who_denied_it_to_the_agent(world: World, service: FakePushService) -> None:
    subscribe(as_person(world.people["ann"]), service.subscribe())
    question = approval(world)
    dispatch()
    (pushed,) = service.wait_for(1)
    assert act(pushed.payload["token"], "deny").status_code == 200
    assert Question.objects.get(pk=question.pk).answer.data == {
        "behavior": "deny", "message": "Denied from a notification by ann.",
    }  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_notification_acts_only_while_its_person_may_answer_and_only_with_its_own_token(
    world: World, service: FakePushService
) -> None:
    subscribe(as_person(world.people["ann"]), service.subscribe())
    question = approval(world)
    dispatch()
    (pushed,) = service.wait_for(1)
    token = pushed.payload["token"]
    assert act(token[:-3] + "xyz", "allow").status_code == 404
    assert act(token, "maybe").json()["field"] == "action"
    world.web.set_member(world.people["ann"], Role.VIEWER)  # access taken away: gone at once
    refused = act(token, "allow")
    assert refused.status_code == 403
    assert "may not answer" in refused.json()["error"]
    assert Question.objects.get(pk=question.pk).is_pending
    world.web.set_member(world.people["ann"], Role.ANSWERER)
    PushSubscription.objects.all().delete()  # turned off on that browser: its notifications do nothing
    assert act(token, "allow").status_code == 410
    assert Question.objects.get(pk=question.pk).is_pending


@pytest.mark.django_db(transaction=True)
def test_a_question_answered_elsewhere_replaces_its_notification_with_the_outcome(
    world: World, service: FakePushService
) -> None:
    subscribe(as_person(world.people["ann"]), service.subscribe())
    question = world.questions["web"]
    Delivery.objects.all().delete()  # the world's question was asked before anyone subscribed
    question = Question.ask(asker=world.tokens["web"], asker_name="web-agent", text="Ship it?", options=[])[0]
    dispatch()
    question.record_answer("Yes, ship it", by_name="bob")
    assert dispatch() == 1
    first, ended = service.wait_for(2)
    assert ended.subscription == first.subscription
    assert ended.payload["tag"] == first.payload["tag"] == f"question-{question.pk}"
    assert ended.payload["ended"] is True
    assert ended.payload["actions"] == []
    assert ended.payload["body"] == "Answered by bob: Yes, ship it"
    assert Delivery.objects.get(purpose=Purpose.UPDATE).status == Status.SENT


@pytest.mark.django_db(transaction=True)
def test_a_subscription_its_service_says_is_gone_is_removed_and_a_failure_is_tried_again(
    world: World, service: FakePushService
) -> None:
    subscribe(as_person(world.people["ann"]), gone := service.subscribe())
    subscribe(as_person(world.people["adm"]), flaky := service.subscribe())
    service.status[gone["endpoint"].rsplit("/", 1)[-1]] = 410
    service.status[flaky["endpoint"].rsplit("/", 1)[-1]] = 503
    question = approval(world)
    assert dispatch() == 2
    failed = Delivery.objects.get(question=question, target__startswith="ann")
    assert (failed.status, failed.push_subscription) == (Status.FAILED, None)
    assert failed.last_error.endswith("answered 410")
    assert list(PushSubscription.objects.values_list("user__username", flat=True)) == ["adm"]
    retried = Delivery.objects.get(question=question, target__startswith="adm")
    assert (retried.status, retried.attempts) == (Status.DUE, 1)
    assert DeliveryAttempt.objects.filter(delivery=retried, ok=False).count() == 1
    assert service.pushed == []


@pytest.mark.django_db
def test_the_vapid_key_is_generated_once_into_the_data_folder_or_taken_from_settings(
    settings: Any, tmp_path: Path
) -> None:
    settings.HOOKBRIDGE_VAPID_KEY_FILE = tmp_path / "vapid_private_key.pem"
    settings.HOOKBRIDGE_VAPID_PRIVATE_KEY = ""
    runtime.vapid = None
    first = push.application_server_key()
    runtime.vapid = None
    assert push.application_server_key() == first, "kept, not made again"
    assert stat.S_IMODE(settings.HOOKBRIDGE_VAPID_KEY_FILE.stat().st_mode) == 0o600
    settings.HOOKBRIDGE_VAPID_PRIVATE_KEY = settings.HOOKBRIDGE_VAPID_KEY_FILE.read_text()
    (tmp_path / "vapid_private_key.pem").unlink()
    runtime.vapid = None
    assert push.application_server_key() == first
    assert not settings.HOOKBRIDGE_VAPID_KEY_FILE.exists(), "a key given in settings writes nothing"
    runtime.vapid = None


def test_push_is_a_step_of_a_policy() -> None:
    assert [str(step) for step in policy.parse("email@10m, push@0s")] == ["push@0s", "email@600s"]


@pytest.mark.django_db
def test_a_vapid_key_in_settings_may_be_a_pem_on_one_line_or_the_raw_key(settings: Any, tmp_path: Path) -> None:
    settings.HOOKBRIDGE_VAPID_KEY_FILE = tmp_path / "unused.pem"
    fresh = Vapid02()
    fresh.generate_keys()
    runtime.vapid = None
    settings.HOOKBRIDGE_VAPID_PRIVATE_KEY = fresh.private_pem().decode().replace("\n", "\\n")
    expected = push.application_server_key()
    raw = fresh.private_key.private_numbers().private_value.to_bytes(32, "big")
    runtime.vapid = None
    settings.HOOKBRIDGE_VAPID_PRIVATE_KEY = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    assert push.application_server_key() == expected
    assert not settings.HOOKBRIDGE_VAPID_KEY_FILE.exists()
    runtime.vapid = None


@pytest.mark.django_db(transaction=True)
def test_a_long_question_is_cut_to_fit_a_push_services_four_kilobytes(world: World, service: FakePushService) -> None:
    subscribe(as_person(world.people["ann"]), service.subscribe())
    Question.ask(asker=world.tokens["web"], asker_name="agent-" + "x" * 140, text="Why? " * 4000, options=[])
    dispatch()
    (pushed,) = service.wait_for(1)
    assert len(json.dumps(pushed.payload).encode()) < 3000
    assert pushed.payload["body"].endswith("…")
    assert len(pushed.payload["body"]) == push.BODY_LIMIT
    assert len(pushed.payload["title"]) == push.TITLE_LIMIT


@pytest.mark.django_db
def test_another_persons_endpoint_posted_with_other_keys_is_refused_and_stays_theirs(
    world: World, service: FakePushService
) -> None:
    """Issue 54: an endpoint URL is no proof of holding the browser; only its keys move a subscription."""
    browser = service.subscribe()
    assert subscribe(as_person(world.people["ann"]), browser).status_code == 201
    mine = service.subscribe()["keys"]  # the taker's own keys, with ann's endpoint
    taken = subscribe(as_person(world.people["adm"]), {**browser, "keys": mine})
    assert taken.status_code == 409
    assert taken.json()["field"] == "endpoint"
    assert "belong to another person" in taken.json()["error"]
    kept = PushSubscription.objects.get()
    assert (kept.user, kept.p256dh, kept.auth) == (
        world.people["ann"], browser["keys"]["p256dh"], browser["keys"]["auth"])  # fmt: skip
    assert subscribe(as_person(world.people["ann"]), {**browser, "keys": mine}).status_code == 200, (
        "its own person may renew its keys"
    )


@pytest.mark.django_db
def test_a_subscription_nested_five_thousand_deep_is_a_400_naming_the_depth(world: World) -> None:
    deep = "[" * 5000 + "]" * 5000
    response = as_person(world.people["ann"]).post("/push/subscriptions", deep, content_type="application/json")
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["error"]
    assert not PushSubscription.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_push_service_answering_a_redirect_is_a_failed_delivery_and_nothing_is_posted_elsewhere(
    world: World, service: FakePushService
) -> None:
    with fake_push_service() as elsewhere:
        subscribe(as_person(world.people["ann"]), bounced := service.subscribe())
        trap = elsewhere.subscribe()
        service.redirect[bounced["endpoint"].rsplit("/", 1)[-1]] = trap["endpoint"]
        question = approval(world)
        assert dispatch() == 1
        failed = Delivery.objects.get(question=question, target__startswith="ann")
        assert failed.status == Status.FAILED, "a redirect is a failed delivery, not retried"
        assert failed.last_error.endswith("answered 307")
        assert DeliveryAttempt.objects.filter(delivery=failed, ok=False).count() == 1
        assert elsewhere.pushed == []
        assert elsewhere.refused == [], "nothing reached the other address at all"
