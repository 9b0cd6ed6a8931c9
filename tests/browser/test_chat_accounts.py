"""Issue 59: a person links their Telegram account from the Notifications page, as people do it: a code made on
the page, given to the bot (`/start CODE`, posted as Telegram posts it to the webhook), and the page then says
whose account it is. Debian's chromium against a real daphne and the test's fake Bot API, at both widths."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.async_api import Browser, expect

from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, SMALL_OR_WIDE, log_in, serious_violations
from testing.chat_fakes import FakeTelegram, fake_telegram, telegram_env, telegram_post
from testing.live import LiveServer


@pytest.fixture(scope="module")
def chatting() -> Iterator[tuple[LiveServer, FakeTelegram]]:
    with fake_telegram() as tg:
        env = {**telegram_env(tg), "HOOKBRIDGE_TELEGRAM_BOT_USERNAME": "hookbridge_bot",
               "HOOKBRIDGE_DISCORD_BOT_TOKEN": "unused", "HOOKBRIDGE_DISCORD_CHANNEL_ID": "1"}  # fmt: skip
        server = LiveServer(env_overrides=env)
        server.setup()
        try:
            yield server, tg
        finally:
            server.close()


@pytest.mark.parametrize(("width", "height", "telegram_id"), [(1440, 900, 4242), (390, 844, 4343)])
async def test_a_person_links_their_telegram_account_with_the_code_their_notifications_page_makes(
    chatting: tuple[LiveServer, FakeTelegram], browser: Browser, width: int, height: int, telegram_id: int
) -> None:
    server, _ = chatting
    context = await browser.new_context(viewport={"width": width, "height": height})
    page = await context.new_page()
    try:
        await log_in(page, server)
        await page.goto(f"{server.url}/notifications/")
        section = page.locator("section", has=page.get_by_role("heading", name="Chat accounts"))
        telegram = section.locator("li", has_text="Telegram")
        discord = section.locator("li", has_text="Discord")
        await expect(discord).to_contain_text("not linked")
        await telegram.get_by_role("button", name="Link your Telegram account").click()
        code = (await telegram.locator(".link-code").inner_text()).strip()
        assert len(code) == 10
        await expect(telegram.get_by_role("link", name="Open the bot in Telegram")).to_have_attribute(
            "href", f"https://t.me/hookbridge_bot?start={code}"
        )
        await expect(telegram.get_by_role("button", name="New code to link your Telegram account")).to_be_visible()
        assert await page.locator("main").evaluate(LAYOUT_PROBLEMS) == []
        assert await page.evaluate(SMALL_OR_WIDE) == []
        assert await serious_violations(page) == []
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / f"chat-accounts-code-{width}.png"), full_page=True)

        sender = {"id": telegram_id, "username": f"me_{width}"}
        update = {"update_id": telegram_id, "message": {"message_id": 1, "chat": {"id": telegram_id, "type": "private"},
                                                        "from": sender, "text": f"/start {code}"}}  # fmt: skip
        assert (await telegram_post(server.url, update)).status_code == 200
        await page.reload()
        await expect(telegram).to_contain_text(f"linked to me_{width}")
        unlink = telegram.get_by_role("button", name="Unlink your Telegram account")
        await expect(unlink).to_be_visible()
        assert await page.locator("main").evaluate(LAYOUT_PROBLEMS) == []
        assert await page.evaluate(SMALL_OR_WIDE) == []
        await page.screenshot(path=str(ARTIFACTS / f"chat-accounts-linked-{width}.png"), full_page=True)
        await unlink.click()
        await expect(page.locator("p.notice")).to_contain_text("Your Telegram account is unlinked")
        await expect(telegram).to_contain_text("not linked")
    finally:
        await context.close()
