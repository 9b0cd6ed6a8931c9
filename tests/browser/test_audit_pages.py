"""The audit record in the admin, as a reviewer sees it in chromium at both widths: the last verify and the public
key above the list, nothing to add, change or delete, nothing wider than the screen. Screenshots go to
test-artifacts/."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect

from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, VIEWPORTS, log_in, serious_violations
from testing.live import LiveServer


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_the_audit_list_says_it_was_verified_and_shows_the_key_and_no_way_to_change_it(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    server = live_server_proc
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, server)  # a sign-in: itself an entry
    said = server.manage("audit", "verify")
    assert "Verified" in said
    await page.goto(f"{server.url}/admin/audit/entry/")
    facts = page.locator(".audit-facts")
    await expect(facts.get_by_role("status")).to_contain_text("Verified through seq")
    key = server.manage("audit", "key").split()[0]
    await expect(facts.locator(".public-key")).to_have_text(key)
    await expect(page.locator("#result_list")).to_contain_text("signin.succeeded")
    await expect(page.get_by_role("link", name="Add entry")).to_have_count(0)
    await expect(page.locator("select[name=action]")).to_have_count(0)  # no bulk actions, not even delete
    assert await page.locator("#content").evaluate(LAYOUT_PROBLEMS) == []
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert await serious_violations(page) == []
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"admin-audit-{width}.png"), full_page=True)
