"""Triage (issue 29, point 1): what someone gives up on soonest leads the dashboard, with its time left.

Four agents report, six long questions wait, and a Claude Code approval arrives last: in Debian's
chromium at 1440x900 and 390x844 the approval's card starts on the first screen, counting down,
whether the page was loaded after it came or had it pushed live.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import Browser, expect

from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, VIEWPORTS, listed, log_in, open_question, serious_violations
from testing.claude_hooks import hook, permission_request
from testing.live import LiveServer, serving

LONG = "\n\n".join(
    f"Paragraph {n}: the migration touches the billing tables, the audit log and the exports." for n in range(8)
)


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    """A server of its own: other tests' questions with deadlines would rightly come before this approval."""
    yield from serving()


async def four_agents_report(server: LiveServer) -> None:
    for token in ("agent-a", "agent-b"):
        async with server.mcp("legacy", token) as client:
            event = {"event_type": "phase-started", "phase_name": f"Work of {token}", "phase_number": "1"}
            await client.call_tool("submit_lifecycle_event", event)
    for n in range(2):
        body = {"hook_event_name": "SessionStart", "session_id": str(uuid.uuid4()), "cwd": f"/home/dev/shop-{n}",
                "source": "startup", "transcript_path": "/tmp/t.jsonl"}  # fmt: skip
        assert (await hook(server, body)).status_code == 200


async def first_screen_top(page: Any, card: Any, height: int) -> float:
    """Where the card starts once the page has put it in its place (a pushed card moves as htmx settles it)."""
    await expect(card).to_be_visible(timeout=10_000)
    top = float("inf")
    for _ in range(50):
        box = await card.bounding_box()  # None while it is being moved
        top = float(box["y"]) if box is not None else top
        if top < height - 120:
            break
        await asyncio.sleep(0.1)
    return top


async def leading(page: Any, card: Any, width: int) -> Any:
    """What leads the first screen for a question: its card beside the list at 1440, its row on a phone (issue 42)."""
    if width >= 1024:
        return card
    await card.wait_for(state="attached", timeout=10_000)
    return page.locator(f'.triage-row[data-for="{await card.get_attribute("id")}"]')


async def test_an_approval_that_came_last_leads_the_first_screen(
    live_server_proc: LiveServer, browser: Browser
) -> None:
    server = live_server_proc
    await four_agents_report(server)
    async with server.mcp("legacy", "agent-b") as client:
        waiting = [
            asyncio.create_task(client.call_tool("ask_question", {"question": f"Triage {n}: which path?\n\n{LONG}"}))
            for n in range(6)
        ]
        for n in range(6):
            await server.wait_for_question(f"Triage {n}: which path?\n\n{LONG}")
        pushed_pages = []
        for width, height in VIEWPORTS:  # open before the approval comes: it is pushed live
            page = await browser.new_page(viewport={"width": width, "height": height})
            await log_in(page, server)
            await listed(page, "Triage 5")
            pushed_pages.append((width, height, page))

        marker = f"echo triage-{uuid.uuid4().hex[:6]}"
        approval = asyncio.ensure_future(hook(server, permission_request(tool_input={"command": marker})))
        try:
            for width, height, page in pushed_pages:
                card = page.locator("article.question.kind-approval", has_text=marker)
                top = await first_screen_top(page, await leading(page, card, width), height)
                assert top < height - 120, f"pushed at {width} px: the approval starts at y={top:.0f}"
                await expect(card.locator(".countdown")).to_have_text(re.compile(r"The host gives up in \d+ min \d+ s"))

            for width, height in VIEWPORTS:  # loaded after it came
                page = await browser.new_page(viewport={"width": width, "height": height})
                await log_in(page, server)
                card = page.locator("article.question.kind-approval", has_text=marker)
                top = await first_screen_top(page, await leading(page, card, width), height)
                assert top < height - 120, f"loaded at {width} px: the approval starts at y={top:.0f}"
                first = page.locator(".triage-row").first
                assert await first.get_attribute("data-for") == await card.get_attribute("id")
                await open_question(page, marker, "article.question.kind-approval")
                await expect(card.locator(".countdown")).to_be_visible()
                await page.keyboard.press("Escape")  # back to the list: on a phone the open question hides the rest
                assert await page.locator("#question-list").evaluate(LAYOUT_PROBLEMS) == []
                assert "{#" not in await page.locator("body").inner_text(), "a template comment shows"
                # One line for them all, however many report (issue 29): the list opens on demand.
                summary = page.locator("#status-bar summary")
                await expect(summary).to_contain_text(re.compile(r"\d+ agents? at work"))
                bar = await page.locator("#status-bar").bounding_box()
                assert bar is not None
                assert bar["height"] < 70, f"the status bar is {bar['height']:.0f} px tall at {width} px"
                assert await serious_violations(page) == []
                await page.screenshot(path=str(ARTIFACTS / f"triage-{width}.png"))
        finally:
            approval.cancel()
            for task in waiting:
                task.cancel()
            await asyncio.gather(approval, *waiting, return_exceptions=True)
