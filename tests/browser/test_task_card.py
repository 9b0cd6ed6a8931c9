"""A question asked as an MCP task (issue 40), as the person sees its card in Debian's chromium at both widths:
it says the agent goes on working, never that it stopped waiting. Screenshots go to test-artifacts/."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest
from playwright.async_api import Browser, Locator, Page, expect

from testing import tasks
from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, VIEWPORTS, log_in, open_question, serious_violations
from testing.live import LiveServer, serving, sqlite_at


@pytest.fixture(scope="module")
def tasks_server() -> Iterator[LiveServer]:
    yield from serving(HOOKBRIDGE_TASKS="auto")


async def asked_in_background(
    server: LiveServer, browser: Browser, text: str, width: int, height: int
) -> tuple[Page, Locator]:
    """A question asked as an MCP task, and its card open on a page of that size."""
    ARTIFACTS.mkdir(exist_ok=True)
    async with server.mcp("2026-07-28", extensions=[tasks.TasksClient()]) as client:
        handle = await client.session.call_tool("ask_question", {"question": text}, allow_claimed=True)
    assert isinstance(handle, tasks.TaskHandle)
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, server)
    card = await open_question(page, text)
    await expect(card).to_be_visible(timeout=10_000)
    return page, card


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_task_s_card_says_the_agent_goes_on_working(
    tasks_server: LiveServer, browser: Browser, width: int, height: int
) -> None:
    page, card = await asked_in_background(
        tasks_server, browser, f"Background: ship the release notes ({width})?", width, height
    )
    await expect(card.locator(".agent-state")).to_have_text(
        "Asked in the background: the agent goes on working, and your answer reaches it as a task result."
    )
    assert await card.evaluate(LAYOUT_PROBLEMS) == []
    assert await serious_violations(page) == []
    await card.screenshot(path=str(ARTIFACTS / f"task-card-{width}.png"))


@pytest.fixture(scope="module")
def short_window_server() -> Iterator[LiveServer]:
    # A re-attach window of 10 s: the sweep runs every 2.5 s, and a card that says the agent stopped asking leaves
    # the queue within the test's time, as any abandoned question does.
    yield from serving(HOOKBRIDGE_TASKS="auto", HOOKBRIDGE_REATTACH_WINDOW="10")


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_task_nobody_polls_says_the_agent_stopped_asking_then_leaves_the_queue(
    short_window_server: LiveServer, browser: Browser, width: int, height: int
) -> None:
    """Issue 55, point 11: a task whose client stopped polling stayed 'the agent goes on working' for ever."""
    server = short_window_server
    text = f"Background, polled no more: tag the release ({width})?"
    page, card = await asked_in_background(server, browser, text, width, height)
    state = card.locator(".agent-state")
    await expect(state).to_contain_text("the agent goes on working")
    # Its client polled once and never again: as if two minutes had passed since.
    two_minutes_ago = (datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=2)).replace(tzinfo=None)
    with sqlite_at(server.tmp / "db.sqlite3") as db:
        changed = db.execute(
            "UPDATE questions_question SET created_at = ?, agent_polled_at = ? WHERE text = ?",
            (two_minutes_ago.isoformat(sep=" "), two_minutes_ago.isoformat(sep=" "), text),
        ).rowcount
    assert changed == 1
    # The server's own sweep finds it and the open card is told, with no reload.
    await expect(state).to_contain_text("Asked in the background; the agent stopped asking", timeout=15_000)
    await expect(state).to_contain_text(f"its task was last polled at {two_minutes_ago:%H:%M}")
    await expect(state).to_contain_text("An answer given now is kept for it until")
    assert await card.evaluate(LAYOUT_PROBLEMS) == []
    assert await serious_violations(page) == []
    await card.screenshot(path=str(ARTIFACTS / f"task-stopped-asking-{width}.png"))
    # Past the re-attach window it leaves the queue, as other abandoned questions do.
    await expect(page.locator(".triage-row", has_text=text)).to_have_count(0, timeout=30_000)
    ended = [q for q in await server.questions() if q["question"] == text]
    assert [(q["status"], q.get("cancelReason")) for q in ended] == [("cancelled", "agent_gone")]
