"""A question asked as an MCP task (issue 40), as the person sees its card in Debian's chromium at both widths:
it says the agent goes on working, never that it stopped waiting. Screenshots go to test-artifacts/."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.async_api import Browser, expect

from testing import tasks
from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, VIEWPORTS, log_in, open_question, serious_violations
from testing.live import LiveServer, serving


@pytest.fixture(scope="module")
def tasks_server() -> Iterator[LiveServer]:
    yield from serving(HOOKBRIDGE_TASKS="auto")


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_task_s_card_says_the_agent_goes_on_working(
    tasks_server: LiveServer, browser: Browser, width: int, height: int
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    text = f"Background: ship the release notes ({width})?"
    async with tasks_server.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
        handle = await client.session.call_tool("ask_question", {"question": text}, allow_claimed=True)
    assert isinstance(handle, tasks.TaskHandle)
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, tasks_server)
    card = await open_question(page, text)
    await expect(card).to_be_visible(timeout=10_000)
    await expect(card.locator(".agent-state")).to_have_text(
        "Asked in the background: the agent goes on working, and your answer reaches it as a task result."
    )
    assert await card.evaluate(LAYOUT_PROBLEMS) == []
    assert await serious_violations(page) == []
    await card.screenshot(path=str(ARTIFACTS / f"task-card-{width}.png"))
