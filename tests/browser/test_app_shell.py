"""Issue 42: the dashboard as an installable app in Debian's chromium — its service worker takes every page, and
a page opened with no connection is the offline page, at 1440 and 390 px, laid out and accessible."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect

from testing.browser import ARTIFACTS, SMALL_OR_WIDE, log_in, serious_violations
from testing.live import LiveServer


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
async def test_with_no_connection_a_page_is_the_offline_page_and_comes_back_with_it(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    context = await browser.new_context(viewport={"width": width, "height": height})
    try:
        page = await context.new_page()
        await log_in(page, live_server_proc)
        scope = await page.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
        assert scope == f"{live_server_proc.url}/"
        manifest = await page.evaluate("fetch(document.querySelector('link[rel=manifest]').href).then((r) => r.json())")
        assert manifest["display"] == "standalone"

        await context.set_offline(True)
        await page.goto(f"{live_server_proc.url}/history/")
        await expect(page.get_by_role("heading", level=1)).to_have_text("No connection to Hook Bridge")
        await expect(page.locator("header.topbar")).to_be_visible()  # styled: the shell's CSS came from the cache
        assert await page.evaluate(SMALL_OR_WIDE) == [], f"offline page at {width} px"
        assert await serious_violations(page) == []
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / f"offline-{width}.png"), full_page=True)

        await context.set_offline(False)
        await page.get_by_role("link", name="Try again").click()
        await expect(page.get_by_role("heading", name="Waiting for an answer")).to_be_visible()
    finally:
        await context.close()
