"""Failures are said where the person is looking (issue 39), in Debian's chromium: a send that cannot reach the
server, a lost live connection, and toasts that never cover the Send bar. Screenshots go to test-artifacts/."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from playwright.async_api import Browser, Route, expect

from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, VIEWPORTS, log_in, open_question
from testing.live import LiveServer, serving


@pytest.fixture(scope="module")
def live_server_proc() -> Iterator[LiveServer]:
    """A server of this module's own: its questions, some left waiting, never reach another module's pages."""
    yield from serving()


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_send_that_cannot_reach_the_server_is_said_on_the_card_and_retry_sends_it(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = await browser.new_page(viewport={"width": width, "height": height})
    needle = f"Outage: which region ({width})?"
    await log_in(page, live_server_proc)

    async def unreachable(route: Route) -> None:
        await route.abort("connectionrefused")

    await page.route("**/questions/*/answer", unreachable)
    async with live_server_proc.mcp("legacy", path="/mcp/askme") as client:
        call = asyncio.create_task(client.call_tool("ask-one-question", {"question": needle}))
        card = await open_question(page, needle)
        await expect(card).to_be_visible(timeout=10_000)
        await card.get_by_role("textbox").first.fill("eu-west-1, as before")
        await card.get_by_role("button", name="Send answer").click()
        failed = card.locator(".send-failed")
        await expect(failed).to_have_text(
            "Not sent: the server could not be reached. What you wrote is kept here.Retry", timeout=5_000
        )
        await expect(card.get_by_role("textbox").first).to_have_value("eu-west-1, as before")
        assert not call.done()
        assert await card.evaluate(LAYOUT_PROBLEMS) == []
        await card.screenshot(path=str(ARTIFACTS / f"failure-send-{width}.png"))

        await page.unroute("**/questions/*/answer", unreachable)
        await failed.get_by_role("button", name="Retry").click()
        result = await asyncio.wait_for(call, 30)
    assert "eu-west-1, as before" in str(result.content)


async def test_a_lost_connection_is_said_above_the_questions_until_it_is_back(browser: Browser) -> None:
    server = LiveServer()
    server.setup()
    try:
        pages = [await browser.new_page(viewport={"width": width, "height": height}) for width, height in VIEWPORTS]
        for page in pages:
            await log_in(page, server)
            await expect(page.locator("#connection-lost")).to_have_count(0)
        server.stop()
        for page, (width, height) in zip(pages, VIEWPORTS, strict=True):
            lost = page.locator("#connection-lost")
            await expect(lost).to_be_visible(timeout=10_000)
            await expect(lost).to_contain_text("Connection to the server lost: reconnecting…")
            box = await lost.bounding_box()
            assert box is not None
            assert box["y"] + box["height"] <= height, "in view, above the questions"
            assert await page.locator("body").evaluate(LAYOUT_PROBLEMS) == []
            await page.screenshot(path=str(ARTIFACTS / f"failure-connection-{width}.png"))
        # The next try comes within 4 s however long the server was gone (issue 55: the extension's own schedule
        # grows to 64 s, and a page said "reconnecting…" 20 s after the server was back).
        delays = await pages[0].evaluate("[...Array(20).keys()].map((n) => htmx.config.wsReconnectDelay(n))")
        assert min(delays) > 0
        assert max(delays) <= 4000
        server.start()  # the same port: htmx's ws extension reconnects by itself
        for page in pages:
            await expect(page.locator("#connection-lost")).to_have_count(0, timeout=30_000)
            await expect(page.locator("#connection")).to_have_text("live")
    finally:
        server.close()


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_toast_sits_above_the_send_bar_not_over_it(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    page = await browser.new_page(viewport={"width": width, "height": height})
    needle = f"Toast: which one ({width})?"
    await log_in(page, live_server_proc)
    async with live_server_proc.mcp("legacy", path="/mcp/maxsim") as client:
        # A form taller than the screen: its Send bar sticks to the bottom while the options scroll under it.
        options = [
            {"value": f"v{n}", "label": f"Option {n}", "description": "What it means, in a line."} for n in range(20)
        ]
        call = asyncio.create_task(client.call_tool("ask_question", {"question": needle, "options": options}))
        card = await open_question(page, needle)
        await expect(card).to_be_visible(timeout=10_000)
        await card.locator("label.pick").nth(12).scroll_into_view_if_needed()
        await page.evaluate(
            """() => { const toast = document.createElement("p"); toast.className = "toast";
            toast.textContent = "Answer sent to agent-b: a long title that takes two lines on a phone";
            document.getElementById("toasts").append(toast); }"""
        )
        bar = await card.locator(".send-bar").bounding_box()
        toast = await page.locator(".toast").last.bounding_box()
        assert bar is not None
        assert toast is not None
        assert bar["y"] + bar["height"] <= height + 0.5, "the Send bar is stuck to the bottom of the screen"
        assert toast["y"] + toast["height"] <= bar["y"], f"the toast ends above the Send bar: {toast} {bar}"
        await page.screenshot(path=str(ARTIFACTS / f"failure-toast-{width}.png"))
        call.cancel()
