"""Reaching people round two (issue 59): Telegram and Discord, on the same steps, roles and policies as Slack.

Against fakes of Telegram's Bot API and Discord's REST API started here (testing.chat_fakes); a Telegram update
carries the webhook's secret, a Discord interaction is signed with an Ed25519 key of the test's own.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from notify import dispatcher, telegram_updates
from notify import runtime as notify_runtime
from notify.models import ChatAccount, Delivery, LinkCode, Platform, Purpose, Status
from projects.models import Project, Role
from questions.kinds import Kind
from questions.models import Question
from testing.chat_fakes import (
    TELEGRAM_SECRET,
    FakeBotFramework,
    FakeDiscord,
    FakeTelegram,
    fake_bot_framework,
    fake_discord,
    fake_telegram,
    teams_env,
)
from testing.project_world import World
from tokens.models import AgentToken

CHAT = "-1001234"
CHANNEL = "987654321"
OPTIONS = [{"value": "blue", "label": "Blue"}, {"value": "green", "label": "Green"}]
APPROVAL = {"tool_name": "Bash", "tool_input": {"command": "make deploy"}}


@pytest.fixture
def tg(settings: Any) -> Iterator[FakeTelegram]:
    with fake_telegram() as fake:
        settings.HOOKBRIDGE_TELEGRAM_BOT_TOKEN = fake.token
        settings.HOOKBRIDGE_TELEGRAM_CHAT_ID = CHAT
        settings.HOOKBRIDGE_TELEGRAM_API_URL = fake.url
        settings.HOOKBRIDGE_TELEGRAM_WEBHOOK_SECRET = TELEGRAM_SECRET
        settings.HOOKBRIDGE_NOTIFY = "telegram@0s"
        yield fake


@pytest.fixture
def dc(settings: Any) -> Iterator[FakeDiscord]:
    with fake_discord() as fake:
        settings.HOOKBRIDGE_DISCORD_BOT_TOKEN = fake.token
        settings.HOOKBRIDGE_DISCORD_PUBLIC_KEY = fake.public_key
        settings.HOOKBRIDGE_DISCORD_CHANNEL_ID = CHANNEL
        settings.HOOKBRIDGE_DISCORD_API_URL = fake.url
        settings.HOOKBRIDGE_NOTIFY = "discord@0s"
        yield fake


def answerer(name: str = "carol", project: Project | None = None) -> User:
    person = User.objects.create_user(name, email=f"{name}@example.com")
    (project or Project.objects.get_or_create(name="default")[0]).set_member(person, Role.ANSWERER)
    return person


def ask(kind: str = Kind.APPROVAL, **kw: Any) -> Question:
    token = AgentToken.objects.filter(name="agent-a").first() or AgentToken.issue("agent-a")[0]
    if kind == Kind.APPROVAL:
        kw = {"text": "May it run Bash?", "options": [], "payload": APPROVAL, **kw}
    else:
        kw = {"text": "Which colour?", "options": OPTIONS, **kw}
    return Question.ask(asker=token, asker_name="agent-a", kind=kind, **kw)[0]


def dispatch() -> int:
    return asyncio.run(dispatcher.dispatch_due())


def to_telegram(client: Client, update: dict[str, Any] | bytes, secret: str | None = TELEGRAM_SECRET) -> Any:
    body = update if isinstance(update, bytes) else json.dumps(update).encode()
    headers = {} if secret is None else {"X-Telegram-Bot-Api-Secret-Token": secret}
    return client.generic("POST", "/integrations/telegram/webhook", body, content_type="application/json",
                          headers=headers)  # fmt: skip


def to_discord(client: Client, fake: FakeDiscord, interaction: dict[str, Any] | bytes, **sign: Any) -> Any:
    body = interaction if isinstance(interaction, bytes) else json.dumps(interaction).encode()
    headers = {k: v for k, v in fake.signed(body, **sign).items() if k != "Content-Type"}
    return client.generic("POST", "/integrations/discord/interactions", body, content_type="application/json",
                          headers=headers)  # fmt: skip


def decided(question: Question) -> Question:
    return Question.objects.select_related("answer").get(pk=question.pk)


# Telegram


@pytest.mark.django_db(transaction=True)
def test_an_approval_goes_to_telegram_with_allow_and_deny_and_a_linked_press_decides_and_edits_it(
    client: Client, tg: FakeTelegram
) -> None:
    carol = answerer()
    ChatAccount.link(carol, Platform.TELEGRAM, "4242", "carol")
    question = ask()
    assert dispatch() == 1
    (sent,) = tg.calls_of("sendMessage")
    assert sent["chat_id"] == CHAT
    assert sent["parse_mode"] == "HTML"
    keyboard = sent["reply_markup"]["inline_keyboard"]
    assert [button["text"] for button in keyboard[0]] == ["Allow", "Deny"]
    assert all(len(button["callback_data"].encode()) <= 64 for row in keyboard for button in row)
    assert "May it run Bash?" in sent["text"]
    assert "/q/" in sent["text"], "the link, in the text off https"
    step = Delivery.objects.get(question=question, channel="telegram")
    assert (step.status, step.posted_in, step.posted_id) == (Status.SENT, CHAT, str(tg.sent()[0]["message_id"]))

    response = to_telegram(client, tg.callback(tg.sent()[0], "Allow", 4242, "carol"))
    assert response.status_code == 200
    answer = decided(question).answer
    assert (answer.data["behavior"], answer.answered_by_user, answer.source) == ("allow", carol, "telegram")
    (told,) = tg.calls_of("answerCallbackQuery")
    assert told["text"] == "Allowed."
    assert dispatch() == 1
    (edited,) = tg.calls_of("editMessageText")
    assert (str(edited["chat_id"]), edited["message_id"]) == (CHAT, tg.sent()[0]["message_id"])
    assert "Answered by carol" in edited["text"]
    assert edited["reply_markup"] == {"inline_keyboard": []}, "no buttons any more"
    assert dispatch() == 0, "each step once"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("secret", [None, "", "wrong-secret", TELEGRAM_SECRET + "x"])
def test_a_telegram_update_without_the_webhook_secret_is_a_401_and_decides_nothing(
    client: Client, tg: FakeTelegram, secret: str | None
) -> None:
    ChatAccount.link(answerer(), Platform.TELEGRAM, "4242")
    question = ask()
    dispatch()
    response = to_telegram(client, tg.callback(tg.sent()[0], "Allow", 4242, "carol"), secret=secret)
    assert response.status_code == 401
    assert decided(question).is_pending
    assert tg.calls_of("answerCallbackQuery") == []


@pytest.mark.django_db(transaction=True)
def test_a_press_by_an_unlinked_telegram_account_is_told_alone_how_to_link_and_decides_nothing(
    client: Client, tg: FakeTelegram
) -> None:
    answerer()
    question = ask()
    dispatch()
    assert to_telegram(client, tg.callback(tg.sent()[0], "Allow", 777, "mallory")).status_code == 200
    assert decided(question).is_pending
    (told,) = tg.calls_of("answerCallbackQuery")
    assert "not linked to a Hook Bridge person" in told["text"] or "not linked" in told["text"]
    assert told["show_alert"] is True, "a refusal is an alert the presser alone reads"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("who", "project"), [("vic", "web"), ("out", "web"), ("ann", "ops")])
def test_a_telegram_press_answers_only_as_someone_who_may_answer_that_project(
    client: Client, tg: FakeTelegram, world: World, who: str, project: str
) -> None:
    """Issue 37's cast: vic only views web, out answers ops only, ann answers web only."""
    ChatAccount.link(world.people[who], Platform.TELEGRAM, "500")
    question = world.questions[project]
    dispatch()
    message = next(m for m in tg.sent() if "Deploy " + project in m["text"])
    assert to_telegram(client, tg.callback(message, "Yes", 500, who)).status_code == 200
    assert decided(question).is_pending
    assert f"may not answer questions of project {project}" in tg.calls_of("answerCallbackQuery")[-1]["text"]
    answering = {"web": "ann", "ops": "out"}[project]
    ChatAccount.link(world.people[answering], Platform.TELEGRAM, "501")
    assert to_telegram(client, tg.callback(message, "Yes", 501, answering)).status_code == 200
    assert decided(question).answer.answered_by_user == world.people[answering]


@pytest.mark.django_db(transaction=True)
def test_a_telegram_button_naming_another_chats_step_is_refused_and_decides_nothing(
    client: Client, tg: FakeTelegram
) -> None:
    """A client can send any callback data for a bot's message: a step posted elsewhere is not this message's."""
    ChatAccount.link(answerer(), Platform.TELEGRAM, "4242")
    question = ask()
    dispatch()
    Delivery.objects.filter(question=question).update(posted_in="-100999")  # the step's message is in another chat
    response = to_telegram(client, tg.callback(tg.sent()[0], "Allow", 4242, "carol"))
    assert response.status_code == 400
    assert decided(question).is_pending


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("body", "status"),
    [(b"{not json", 400), (b"[1, 2]", 400), (b"[" * 5000 + b"]" * 5000, 400), (b'{"x": "' + b"a" * 70_000 + b'"}', 413),
     (json.dumps({"update_id": 1, "callback_query": {"id": "1", "data": "hb:1:a"}}).encode(), 400),
     (json.dumps({"update_id": 1, "callback_query": {"id": "1", "from": {"id": 1}, "message": {"message_id": 1,
      "chat": {"id": 1}}, "data": "DROP TABLE"}}).encode(), 400)],
)  # fmt: skip
def test_a_malformed_or_oversized_telegram_update_is_a_4xx_and_changes_nothing(
    client: Client, tg: FakeTelegram, body: bytes, status: int
) -> None:
    question = ask()
    dispatch()
    response = to_telegram(client, body)
    assert response.status_code == status
    assert decided(question).is_pending


@pytest.mark.django_db(transaction=True)
def test_a_single_choice_question_gets_a_button_per_option_and_a_press_answers_with_that_option(
    client: Client, tg: FakeTelegram
) -> None:
    ChatAccount.link(answerer(), Platform.TELEGRAM, "4242")
    question = ask(Kind.QUESTION)
    dispatch()
    keyboard = tg.sent()[0]["reply_markup"]["inline_keyboard"]
    assert [[button["text"] for button in row] for row in keyboard] == [["Blue"], ["Green"]]
    assert to_telegram(client, tg.callback(tg.sent()[0], "Green", 4242, "carol")).status_code == 200
    assert decided(question).answer.option == "green"
    assert tg.calls_of("answerCallbackQuery")[0]["text"] == "Answered: Green."


@pytest.mark.django_db(transaction=True)
def test_a_telegram_press_on_an_approval_needing_two_is_one_vote_and_never_the_authors(
    client: Client, tg: FakeTelegram
) -> None:
    shop = Project.objects.create(name="shop")
    ann, bob = answerer("ann", shop), answerer("bob", shop)
    ChatAccount.link(ann, Platform.TELEGRAM, "1")
    ChatAccount.link(bob, Platform.TELEGRAM, "2")
    needs = {"policy": "the policy 'two'", "quorum": 2, "self_approval": False}
    question = ask(project=shop, requirement=needs)
    dispatch()
    message = tg.sent()[0]
    to_telegram(client, tg.callback(message, "Allow", 1, "ann"))
    assert decided(question).is_pending, "one of two"
    assert "1 of 2" in tg.calls_of("answerCallbackQuery")[0]["text"]
    to_telegram(client, tg.callback(message, "Allow", 1, "ann"))
    assert decided(question).is_pending, "the same person twice is one vote"
    to_telegram(client, tg.callback(message, "Allow", 2, "bob"))
    assert decided(question).answer.data["behavior"] == "allow"


@pytest.mark.django_db(transaction=True)
def test_a_person_links_their_telegram_account_once_with_a_code_from_their_page(
    client: Client, tg: FakeTelegram, settings: Any
) -> None:
    settings.HOOKBRIDGE_TELEGRAM_BOT_USERNAME = "hookbridge_bot"
    carol = answerer()
    client.force_login(carol)
    page = client.get("/notifications/").content.decode()
    assert "Chat accounts" in page
    assert "not linked" in page
    assert client.post("/notifications/chat/telegram/code").status_code == 302
    code = LinkCode.objects.get(user=carol).code
    page = client.get("/notifications/").content.decode()
    assert f"https://t.me/hookbridge_bot?start={code}" in page
    sender = {"id": 4242, "username": "carol_tg"}
    message = {"message_id": 1, "chat": {"id": 4242, "type": "private"}, "from": sender, "text": f"/start {code}"}
    start: dict[str, Any] = {"update_id": 9, "message": message}
    assert to_telegram(client, start).status_code == 200
    account = ChatAccount.objects.get(user=carol)
    assert (account.platform, account.external_id, account.name) == ("telegram", "4242", "carol_tg")
    assert "now answer as carol" in tg.calls_of("sendMessage")[-1]["text"]
    # The code is used once: another account sending it links nothing.
    start["message"]["from"] = {"id": 666, "username": "mallory"}
    to_telegram(client, start)
    assert ChatAccount.objects.get(platform="telegram").external_id == "4242"
    assert "not known here" in tg.calls_of("sendMessage")[-1]["text"]
    assert "linked to carol_tg" in client.get("/notifications/").content.decode()
    client.post("/notifications/chat/telegram/unlink")
    assert not ChatAccount.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_chat_account_is_one_persons_and_an_expired_code_links_nothing(tg: FakeTelegram) -> None:
    carol, dave = answerer("carol"), answerer("dave")
    ChatAccount.link(carol, Platform.TELEGRAM, "4242")
    with pytest.raises(ValueError, match="linked to someone else"):
        ChatAccount.link(dave, Platform.TELEGRAM, "4242")
    code = LinkCode.issue(dave, Platform.TELEGRAM)
    LinkCode.objects.filter(pk=code.pk).update(expires_at=code.expires_at.replace(year=2000))
    with pytest.raises(ValueError, match="minutes old"):
        LinkCode.redeem(Platform.TELEGRAM, code.code, "555", "dave")
    assert ChatAccount.objects.filter(user=dave).count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_telegram_message_copy_whose_id_a_dead_worker_lost_still_decides_and_is_edited(
    client: Client, tg: FakeTelegram
) -> None:
    """The Bot API cannot look up a message: a step taken over mid-send is posted again; the first copy's press
    counts and edits it."""
    ChatAccount.link(answerer(), Platform.TELEGRAM, "4242")
    question = ask()
    step = Delivery.objects.get(question=question)
    lost = tg.answer("sendMessage", {"chat_id": CHAT, "text": "x", "reply_markup": {"inline_keyboard": [[
        {"text": "Allow", "callback_data": f"hb:{step.pk}:a"}]]}})[1]["result"]  # fmt: skip
    dispatch()
    assert len(tg.sent()) == 2
    assert to_telegram(client, tg.callback(lost, "Allow", 4242, "carol")).status_code == 200
    assert decided(question).answer.data["behavior"] == "allow"
    (edited,) = tg.calls_of("editMessageText")
    assert edited["message_id"] == lost["message_id"]
    dispatch()
    assert len(tg.calls_of("editMessageText")) == 2, "and the kept message by its update step"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("status", "said", "state"), [(403, "Forbidden: bot was kicked", Status.FAILED),
                                                      (429, "Too Many Requests: retry after 3", Status.DUE),
                                                      (502, "Bad Gateway", Status.DUE)])  # fmt: skip
def test_a_telegram_error_is_given_up_or_tried_again_as_telegram_means_it(
    tg: FakeTelegram, status: int, said: str, state: str
) -> None:
    tg.errors["sendMessage"] = (status, said)
    question = ask()
    dispatch()
    step = Delivery.objects.get(question=question)
    assert (step.status, step.last_error) == (state, f"Telegram said {status}: {said}")
    assert tg.token not in step.last_error


@pytest.mark.django_db(transaction=True)
def test_polling_reads_telegram_presses_with_get_updates(tg: FakeTelegram) -> None:
    ChatAccount.link(answerer(), Platform.TELEGRAM, "4242")
    question = ask()
    dispatch()
    update = tg.callback(tg.sent()[0], "Deny", 4242, "carol")
    tg.queued.append(update)

    def asked_past_it() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if any(call["offset"] == update["update_id"] + 1 for call in tg.calls_of("getUpdates")):
                return
            time.sleep(0.02)

    async def poll_a_while() -> None:
        task = asyncio.create_task(telegram_updates.poll_forever())
        await asyncio.to_thread(asked_past_it)
        task.cancel()

    asyncio.run(poll_a_while())
    assert decided(question).answer.data["behavior"] == "deny"
    assert len(tg.calls_of("answerCallbackQuery")) == 1, "an update is read once"
    assert tg.calls_of("getUpdates")[0]["offset"] == 0


@pytest.mark.django_db
def test_manage_link_links_and_unlinks_a_persons_chat_account_and_names_a_wrong_field() -> None:
    carol = answerer()
    call_command("link", "discord", "carol", "112233445566")
    assert ChatAccount.objects.get(user=carol, platform="discord").linked_by == "manage.py link"
    with pytest.raises(CommandError, match="username: nobody here is called 'nobody'"):
        call_command("link", "telegram", "nobody", "1")
    with pytest.raises(CommandError, match="platform_user_id: a Telegram user's id is a number"):
        call_command("link", "telegram", "carol", "@carol")
    call_command("link", "discord", "carol", "--remove")
    assert not ChatAccount.objects.exists()


# Discord


@pytest.mark.django_db(transaction=True)
def test_discord_answers_a_signed_ping_and_refuses_an_unsigned_or_badly_signed_one(
    client: Client, dc: FakeDiscord
) -> None:
    assert to_discord(client, dc, {"type": 1}).json() == {"type": 1}
    body = json.dumps({"type": 1}).encode()
    unsigned = client.generic("POST", "/integrations/discord/interactions", body, content_type="application/json")
    assert unsigned.status_code == 401
    other = FakeDiscord()  # another key pair: not the application's
    assert to_discord(client, other, {"type": 1}).status_code == 401
    assert to_discord(client, dc, {"type": 1}, at=int(time.time()) - 600).status_code == 401, "replayed later"
    headers = dc.signed(body)
    tampered = body.replace(b"1", b"3")
    refused = client.generic("POST", "/integrations/discord/interactions", tampered, content_type="application/json",
                             headers={k: v for k, v in headers.items() if k != "Content-Type"})  # fmt: skip
    assert refused.status_code == 401


@pytest.mark.django_db(transaction=True)
def test_an_approval_goes_to_discord_with_buttons_and_a_linked_press_updates_it_to_say_who_decided(
    client: Client, dc: FakeDiscord
) -> None:
    carol = answerer()
    ChatAccount.link(carol, Platform.DISCORD, "31337")
    question = ask()
    assert dispatch() == 1
    (posted,) = dc.calls_of("POST")
    labels = [button.get("label") for row in posted["components"] for button in row["components"]]
    assert labels == ["Allow", "Deny", "Answer…"] or labels == ["Allow", "Deny", "Open…"]
    assert posted["nonce"] == f"hb{Delivery.objects.get(question=question).pk}"
    assert posted["enforce_nonce"] is True
    response = to_discord(client, dc, dc.press(dc.sent()[0], "Deny", "31337", "carol"))
    assert response.status_code == 200
    assert response.json()["type"] == 7
    assert "Answered by carol" in response.json()["data"]["content"]
    assert response.json()["data"]["components"] == []
    assert decided(question).answer.data["behavior"] == "deny"
    assert decided(question).answer.source == "discord"
    dispatch()
    (edited,) = dc.calls_of("PATCH")
    assert "Answered by carol" in edited["content"]


@pytest.mark.django_db(transaction=True)
def test_an_unlinked_discord_presser_is_told_alone_and_links_with_the_form_and_a_code(
    client: Client, dc: FakeDiscord
) -> None:
    carol = answerer()
    question = ask()
    dispatch()
    said = to_discord(client, dc, dc.press(dc.sent()[0], "Allow", "31337", "carol")).json()
    assert (said["type"], said["data"]["flags"]) == (4, 64), "a message to the presser alone"
    assert "not linked" in said["data"]["content"]
    assert decided(question).is_pending
    link_button = said["data"]["components"][0]["components"][0]
    press = dc.press(dc.sent()[0], "Allow", "31337", "carol")
    press["data"]["custom_id"] = link_button["custom_id"]
    form = to_discord(client, dc, press).json()
    assert form["type"] == 9
    code = LinkCode.issue(carol, Platform.DISCORD).code
    field = form["data"]["components"][0]["components"][0]
    submit = {**press, "type": 5, "data": {"custom_id": form["data"]["custom_id"], "components": [
        {"type": 1, "components": [{"type": 4, "custom_id": field["custom_id"], "value": code.lower()}]}]}}  # fmt: skip
    linked = to_discord(client, dc, submit).json()
    assert "now answer as carol" in linked["data"]["content"]
    assert ChatAccount.objects.get(platform="discord").user == carol
    assert to_discord(client, dc, dc.press(dc.sent()[0], "Allow", "31337", "carol")).json()["type"] == 7


@pytest.mark.django_db(transaction=True)
def test_a_discord_step_taken_over_mid_post_is_one_message(dc: FakeDiscord) -> None:
    """A worker that died after Discord took its post: the taker-over posts with the same nonce, and Discord gives
    back the message already made."""
    question = ask()
    step = Delivery.objects.get(question=question)
    assert step.claim()
    step.mark_sending()
    dc.answer("POST", f"/channels/{CHANNEL}/messages", {"content": "x", "nonce": f"hb{step.pk}", "enforce_nonce": True})
    Delivery.objects.filter(pk=step.pk).update(lease_until=step.created_at.replace(year=2000))  # its worker died
    assert dispatch() == 1
    assert len(dc.sent()) == 1
    assert Delivery.objects.get(pk=step.pk).posted_id == dc.sent()[0]["id"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("change", ["another channel's message", "not our button", "no user", "unknown type"])
def test_a_signed_discord_interaction_that_is_not_one_of_ours_is_a_400_and_decides_nothing(
    client: Client, dc: FakeDiscord, change: str
) -> None:
    ChatAccount.link(answerer(), Platform.DISCORD, "31337")
    question = ask()
    dispatch()
    press = dc.press(dc.sent()[0], "Allow", "31337", "carol")
    if change == "another channel's message":
        press["channel_id"] = "111"
    elif change == "not our button":
        press["data"]["custom_id"] = "something:else"
    elif change == "no user":
        del press["member"]
    else:
        press["type"] = 2
    assert to_discord(client, dc, press).status_code == 400
    assert decided(question).is_pending


@pytest.mark.django_db(transaction=True)
def test_a_projects_policy_sends_to_its_own_telegram_chat_and_discord_channel(
    tg: FakeTelegram, dc: FakeDiscord, settings: Any
) -> None:
    from notify.models import NotifyPolicy

    shop = Project.objects.create(name="shop")
    NotifyPolicy.objects.create(project=shop, steps="telegram@0s,discord@1m", telegram_chat="-100777",
                                discord_channel="555")  # fmt: skip
    question = ask(project=shop)
    steps = {d.channel: d.target for d in Delivery.objects.filter(question=question, purpose=Purpose.NOTIFY)}
    assert steps == {"telegram": "-100777", "discord": "555"}


@pytest.mark.django_db
def test_a_superuser_links_a_chat_account_in_the_admin_and_an_account_of_another_person_is_refused(
    client: Client,
) -> None:
    root = User.objects.create_superuser("root", password="pw-root-12345")
    carol, dave = answerer("carol"), answerer("dave")
    client.force_login(root)
    form = {"user": carol.pk, "platform": "telegram", "external_id": "4242", "name": "carol"}
    assert client.post("/admin/notify/chataccount/add/", form).status_code == 302
    assert ChatAccount.objects.get().linked_by == "root (admin)"
    refused = client.post("/admin/notify/chataccount/add/", {**form, "user": dave.pk})
    assert refused.status_code == 200
    assert ChatAccount.objects.count() == 1
    client.force_login(carol)
    assert client.get("/admin/notify/chataccount/").status_code in (302, 403)


# Microsoft Teams

CONVERSATION = "19:e2e@thread.tacv2"


@pytest.fixture
def bf(settings: Any) -> Iterator[FakeBotFramework]:
    with fake_bot_framework() as fake:
        for name, value in teams_env(fake, CONVERSATION).items():
            setattr(settings, name, value)
        notify_runtime.teams_token = notify_runtime.teams_keys = None  # another test's fake signed those
        yield fake
        notify_runtime.teams_token = notify_runtime.teams_keys = None


def to_teams(client: Client, activity: dict[str, Any], authorization: str | None) -> Any:
    headers = {"Authorization": authorization} if authorization else {}
    return client.generic("POST", "/integrations/teams/messages", json.dumps(activity).encode(),
                          content_type="application/json", headers=headers)  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_an_approval_goes_to_teams_as_a_card_and_a_linked_press_decides_and_replaces_it(
    client: Client, bf: FakeBotFramework
) -> None:
    carol = answerer()
    ChatAccount.link(carol, Platform.TEAMS, "aad-carol")
    question = ask()
    assert dispatch() == 1
    (token_request,) = bf.token_requests
    assert token_request["scope"] == "https://api.botframework.com/.default"
    assert token_request["grant_type"] == "client_credentials"
    (posted,) = bf.calls_of("POST")
    card = posted["attachments"][0]["content"]
    assert [a["title"] for a in card["actions"]] == ["Allow", "Deny", "Open…"]
    assert card["actions"][0]["type"] == "Action.Execute"
    step = Delivery.objects.get(question=question)
    assert (step.posted_in, step.posted_id) == (CONVERSATION, bf.sent()[0]["id"])

    response = to_teams(client, bf.invoke(bf.sent()[0], "Allow", "aad-carol", "Carol"), bf.bearer())
    assert response.status_code == 200, response.content
    assert response.json()["type"] == "application/vnd.microsoft.card.adaptive"
    assert "Answered by carol" in json.dumps(response.json()["value"])
    assert decided(question).answer.data["behavior"] == "allow"
    assert decided(question).answer.source == "teams"
    dispatch()
    (put,) = bf.calls_of("PUT")
    assert "Answered by carol" in json.dumps(put["attachments"][0]["content"])
    assert len(bf.token_requests) == 1, "the token is kept until it nears its expiry"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("token", ["none", "not a jwt", "another key", "another app", "another issuer", "expired",
                                   "another service"])  # fmt: skip
def test_a_teams_activity_without_a_valid_bot_framework_token_is_a_401_and_decides_nothing(
    client: Client, bf: FakeBotFramework, token: str
) -> None:
    from joserfc.jwk import RSAKey

    ChatAccount.link(answerer(), Platform.TEAMS, "aad-carol")
    question = ask()
    dispatch()
    given = {
        "none": None, "not a jwt": "Bearer abc.def.ghi",
        "another key": bf.bearer(key=RSAKey.generate_key(2048, parameters={"kid": "e2e-key"})),
        "another app": bf.bearer(audience="someone-elses-app"), "another issuer": bf.bearer(issuer="https://evil"),
        "expired": bf.bearer(expires_in=-600), "another service": bf.bearer(service_url="https://evil/connector/"),
    }[token]  # fmt: skip
    response = to_teams(client, bf.invoke(bf.sent()[0], "Allow", "aad-carol", "Carol"), given)
    assert response.status_code == 401
    assert decided(question).is_pending


@pytest.mark.django_db(transaction=True)
def test_an_unlinked_teams_presser_is_told_and_links_with_a_message_to_the_bot(
    client: Client, bf: FakeBotFramework
) -> None:
    carol = answerer()
    question = ask()
    dispatch()
    said = to_teams(client, bf.invoke(bf.sent()[0], "Deny", "aad-carol", "Carol"), bf.bearer()).json()
    assert said["type"] == "application/vnd.microsoft.activity.message"
    assert "not linked" in said["value"]
    assert decided(question).is_pending
    code = LinkCode.issue(carol, Platform.TEAMS).code
    message = {"type": "message", "id": "m1", "serviceUrl": bf.service_url, "text": f"<at>Hook Bridge</at> link {code}",
               "from": {"id": "29:x", "name": "Carol", "aadObjectId": "aad-carol"},
               "conversation": {"id": CONVERSATION}}  # fmt: skip
    assert to_teams(client, message, bf.bearer()).status_code == 200
    assert ChatAccount.objects.get(platform="teams").external_id == "aad-carol"
    assert "now answer as carol" in bf.calls_of("POST")[-1]["text"]
    assert to_teams(client, bf.invoke(bf.sent()[0], "Deny", "aad-carol", "Carol"), bf.bearer()).status_code == 200
    assert decided(question).answer.data["behavior"] == "deny"


@pytest.mark.django_db
def test_manage_telegram_set_webhook_registers_the_url_with_its_secret_and_refuses_without_one(
    tg: FakeTelegram, settings: Any
) -> None:
    settings.HOOKBRIDGE_PUBLIC_URL = "https://hooks.example.com"
    call_command("telegram", "set-webhook")
    (registered,) = tg.calls_of("setWebhook")
    assert registered["url"] == "https://hooks.example.com/integrations/telegram/webhook"
    assert registered["secret_token"] == TELEGRAM_SECRET
    assert set(registered["allowed_updates"]) == {"callback_query", "message"}
    call_command("telegram", "delete-webhook")
    assert len(tg.calls_of("deleteWebhook")) == 1
    settings.HOOKBRIDGE_TELEGRAM_WEBHOOK_SECRET = ""
    with pytest.raises(CommandError, match="HOOKBRIDGE_TELEGRAM_WEBHOOK_SECRET is not set"):
        call_command("telegram", "set-webhook")
    tg.errors["setWebhook"] = (401, "Unauthorized")
    settings.HOOKBRIDGE_TELEGRAM_WEBHOOK_SECRET = TELEGRAM_SECRET
    with pytest.raises(CommandError, match="Telegram said 401: Unauthorized"):
        call_command("telegram", "set-webhook")


@pytest.mark.django_db(transaction=True)
def test_an_oversized_discord_or_teams_body_is_a_413_and_decides_nothing(
    client: Client, dc: FakeDiscord, bf: FakeBotFramework
) -> None:
    big = json.dumps({"type": 3, "pad": "a" * 70_000}).encode()
    assert to_discord(client, dc, big).status_code == 413
    oversized = {"type": "message", "text": "a" * 70_000}
    assert to_teams(client, oversized, bf.bearer()).status_code == 413


@pytest.mark.django_db(transaction=True)
def test_an_approval_policys_escalation_reaches_telegram_discord_and_teams_at_their_times(
    tg: FakeTelegram, dc: FakeDiscord, bf: FakeBotFramework
) -> None:
    from approvals import policyfile

    shop = Project.objects.create(name="shop")
    found = policyfile.load(
        "project: shop\napprovals:\n  - name: deploys\n    escalate: [{after: 0s, notify: telegram}, "
        "{after: 2m, notify: discord}, {after: 5m, notify: teams}]\n"
    )
    (approval,) = found.approvals
    needs = {"policy": "the policy 'deploys'", "quorum": 1, "escalate": approval.escalate}
    question = ask(project=shop, requirement=needs)
    steps = {d.channel: (d.due_at - question.created_at).total_seconds() for d in Delivery.objects.filter(
        question=question)}  # fmt: skip
    assert steps == {"telegram": 0, "discord": 120, "teams": 300}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("body", "status"),
    [(b"{not json", 400), (b"[1]", 400),
     (json.dumps({"type": "invoke", "name": "adaptiveCard/action", "value": {"action": {"data": "x"}}}).encode(), 400),
     (json.dumps({"type": "invoke", "name": "adaptiveCard/action", "value": {"action": {"data": {"hb": "hb:1:a"}}},
                  "from": "someone", "conversation": {"id": CONVERSATION}}).encode(), 400)],
)  # fmt: skip
def test_a_malformed_teams_activity_with_a_good_token_is_a_400_and_decides_nothing(
    client: Client, bf: FakeBotFramework, body: bytes, status: int
) -> None:
    question = ask()
    dispatch()
    response = client.generic("POST", "/integrations/teams/messages", body, content_type="application/json",
                              headers={"Authorization": bf.bearer()})  # fmt: skip
    assert response.status_code == status
    assert decided(question).is_pending
