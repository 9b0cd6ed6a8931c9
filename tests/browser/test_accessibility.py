"""Every kind of page in Debian's chromium at 1440 and 390 px: no critical or serious axe-core violation (axe from
npm, tests/ts), no text below 12 px, nothing wider than the screen, no console error."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from playwright.async_api import Browser, ConsoleMessage, expect

from testing.browser import ARTIFACTS, CARDS, SMALL_OR_WIDE, listed, log_in, serious_violations
from testing.live import LiveServer

SCREENS: list[tuple[int, int, Literal["light", "dark"]]] = [
    (1440, 900, "light"),
    (390, 844, "light"),
    (1440, 900, "dark"),
]
PAGE_NAMES = ["dashboard", "question", "history", "sessions", "session", "hook-runs", "replies", "agents"]


async def test_every_page_passes_axe(live_server_proc: LiveServer, browser: Browser) -> None:
    guid = await live_server_proc.open_session(name="Axe run", project="a11y")
    async with live_server_proc.mcp("legacy", path="/mcp/maxsim+askme+clifford") as client:
        calls = [asyncio.create_task(client.call_tool(tool, arguments)) for _, tool, arguments, _ in CARDS]
        try:
            for width, height, scheme in SCREENS:
                page = await browser.new_page(viewport={"width": width, "height": height}, color_scheme=scheme)
                errors: list[str] = []

                def note(message: ConsoleMessage, errors: list[str] = errors, page: Any = page) -> None:
                    if message.type == "error":
                        errors.append(f"{page.url}: {message.text}")

                page.on("console", note)
                await log_in(page, live_server_proc)
                for _, _, _, needle in CARDS:
                    await listed(page, needle)
                question = (await live_server_proc.questions(status="pending"))[0]
                paths = [
                    "/",
                    f"/questions/{question['id']}/",
                    "/history/",
                    "/sessions/",
                    f"/sessions/{guid}/",
                    "/hooks/runs/",
                    "/replies/",
                    "/agents/",
                ]
                for index, path in enumerate(paths):
                    await page.goto(f"{live_server_proc.url}{path}")
                    where = f"{path} at {width} px, {scheme}"
                    assert await serious_violations(page) == [], where
                    assert await page.evaluate(SMALL_OR_WIDE) == [], where
                    await page.screenshot(
                        path=str(ARTIFACTS / f"a11y-{PAGE_NAMES[index]}-{width}-{scheme}.png"),
                        full_page=True,
                    )
                assert errors == [], errors
                await page.close()
        finally:
            async with live_server_proc.login() as http:
                for pending in await live_server_proc.questions(status="pending"):
                    if "Layout:" in pending["question"] or "Layout:" in str(pending["payload"]):
                        await http.post(f"/questions/{pending['id']}/dismiss")
            await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 30)


async def test_a_keyboard_user_can_skip_to_the_content(live_server_proc: LiveServer, browser: Browser) -> None:
    page = await browser.new_page()
    await log_in(page, live_server_proc)
    await page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to the content")
    await expect(skip).to_be_focused()
    await expect(skip).to_be_in_viewport()
    await page.keyboard.press("Enter")
    assert await page.evaluate("document.activeElement.id") == "main"
