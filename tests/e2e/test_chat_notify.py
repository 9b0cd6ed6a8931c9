"""Telegram and Discord against a real daphne process (issue 59): an approval a Claude Code hook waits on is
posted with its buttons, and a press by a linked answerer lets the hook go on.

The fakes of Telegram's Bot API and Discord's REST API are started here (testing.chat_fakes); Telegram's updates
carry the webhook's secret, Discord's interactions are signed with the test's own Ed25519 key.
"""

from __future__ import annotations

import asyncio
import json

import httpx2

from testing.chat_fakes import (
    discord_env,
    discord_post,
    fake_bot_framework,
    fake_discord,
    fake_telegram,
    teams_env,
    teams_post,
    telegram_env,
    telegram_post,
)
from testing.claude_hooks import hook, permission_request
from testing.live import LiveServer, free_port


def serving(env: dict[str, str]) -> LiveServer:
    port = free_port()
    server = LiveServer(env_overrides={**env, "HOOKBRIDGE_PUBLIC_URL": f"http://127.0.0.1:{port}"}, port=port)
    server.setup()
    # An answerer in the default project, as `hookbridge user create` makes one (it reads a password from a terminal).
    server.manage("shell", "-c", "from django.contrib.auth.models import User; from projects.models import Project, "
                  "Role; Project.default().set_member(User.objects.create_user('dana'), Role.ANSWERER)")  # fmt: skip
    return server


async def test_a_telegram_press_by_a_linked_answerer_lets_the_waiting_hook_go_on_and_the_message_says_who() -> None:
    with fake_telegram() as tg:
        server = serving(telegram_env(tg))
        try:
            assert "Linked Telegram account 4242 to dana" in server.manage("link", "telegram", "dana", "4242")
            waiting = asyncio.create_task(hook(server, permission_request()))
            (sent,) = await asyncio.to_thread(tg.wait_for, "sendMessage")
            assert [b["text"] for b in sent["reply_markup"]["inline_keyboard"][0]] == ["Allow", "Deny"]
            message = tg.sent()[0]
            refused = await telegram_post(server.url, tg.callback(message, "Allow", 4242, "dana"), secret="guess")
            assert refused.status_code == 401
            stranger = await telegram_post(server.url, tg.callback(message, "Allow", 666, "mallory"))
            assert stranger.status_code == 200
            assert not waiting.done(), "neither a wrong secret nor an unlinked account decides"
            pressed = await telegram_post(server.url, tg.callback(message, "Allow", 4242, "dana"))
            assert pressed.status_code == 200, pressed.text
            decided = await asyncio.wait_for(waiting, 30)
            assert decided.json()["hookSpecificOutput"]["decision"]["behavior"] == "allow"
            (edited,) = await asyncio.to_thread(tg.wait_for, "editMessageText")
            assert "Answered by dana" in edited["text"]
            assert edited["reply_markup"] == {"inline_keyboard": []}
            told = [call["text"] for call in tg.calls_of("answerCallbackQuery")]
            assert "not linked" in told[0]
            assert told[1] == "Allowed."
        finally:
            server.close()


async def test_discord_answers_a_signed_ping_refuses_an_unsigned_one_and_a_linked_press_denies_the_hook() -> None:
    with fake_discord() as dc:
        server = serving(discord_env(dc))
        try:
            pong = await discord_post(server.url, dc, {"type": 1})
            assert (pong.status_code, pong.json()) == (200, {"type": 1})
            async with httpx2.AsyncClient() as http:
                body = json.dumps({"type": 1})
                unsigned = await http.post(f"{server.url}/integrations/discord/interactions", content=body)
            assert unsigned.status_code == 401
            server.manage("link", "discord", "dana", "31337")
            waiting = asyncio.create_task(hook(server, permission_request()))
            await asyncio.to_thread(dc.wait_for, "POST")
            pressed = await discord_post(server.url, dc, dc.press(dc.sent()[0], "Deny", "31337", "dana"))
            assert pressed.json()["type"] == 7, pressed.text
            assert "Answered by dana" in pressed.json()["data"]["content"]
            decided = await asyncio.wait_for(waiting, 30)
            assert decided.json()["hookSpecificOutput"]["decision"]["behavior"] == "deny"
        finally:
            server.close()


async def test_teams_refuses_an_activity_without_a_bot_framework_token_and_a_linked_press_allows_the_hook() -> None:
    with fake_bot_framework() as bf:
        server = serving(teams_env(bf))
        try:
            server.manage("link", "teams", "dana", "aad-dana")
            waiting = asyncio.create_task(hook(server, permission_request()))
            await asyncio.to_thread(bf.wait_for, "POST")
            press = bf.invoke(bf.sent()[0], "Allow", "aad-dana", "Dana")
            assert (await teams_post(server.url, press, None)).status_code == 401
            forged = bf.bearer(audience="another-app")
            assert (await teams_post(server.url, press, forged)).status_code == 401
            assert not waiting.done()
            pressed = await teams_post(server.url, press, bf.bearer())
            assert pressed.status_code == 200, pressed.text
            assert "Answered by dana" in pressed.text
            decided = await asyncio.wait_for(waiting, 30)
            assert decided.json()["hookSpecificOutput"]["decision"]["behavior"] == "allow"
            (put,) = await asyncio.to_thread(bf.wait_for, "PUT")
            assert "Answered by dana" in json.dumps(put)
        finally:
            server.close()
