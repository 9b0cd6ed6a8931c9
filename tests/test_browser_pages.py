"""The lists of past work use the screen (issue 29 point 5), in Debian's chromium at 1440 and 390 px.

History and sessions are tables from 1024 px on, their dates and names each on one line; below that their
rows stack as cards. Nothing is wider than a phone's screen with a 120-character title, cwd or project. An
agent's markdown reads as words in titles and lists, never as `**` marks, and search hits are marked.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from tests.live import LiveServer
from tests.test_accessibility import SMALL_OR_WIDE, serious_violations
from tests.test_browser import ARTIFACTS, log_in
from tests.test_browser_approvals import FIXTURES, hook

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

LONG = "x" * 120
TITLE = f"Pages: which **Python** for the `deploy` job? {LONG}"
PROJECT = "p" * 120
CWD = "/home/dev/" + "c" * 110

# Each visible cell of the first rows: its column, how many lines its text takes, and whether it shows.
CELLS = """
(table) => [...table.querySelectorAll("tbody tr")].slice(0, 5).flatMap((row) =>
  [...row.querySelectorAll("td")].map((cell) => {
    const style = getComputedStyle(cell);
    const lineHeight = parseFloat(style.lineHeight) || 1.5 * parseFloat(style.fontSize);
    const text = cell.querySelector("time, .name, span[title]") || cell;
    const lines = Math.round(text.getBoundingClientRect().height / lineHeight);
    return { column: cell.dataset.label, lines, display: style.display, classes: cell.className };
  })
)
"""


MADE: dict[str, dict[str, str]] = {}  # per server: the work is made once, for every test of this module


@pytest.fixture
async def past_work(live_server_proc: LiveServer) -> dict[str, str]:
    """An answered question with a long markdown title, a Claude Code session in a long cwd, a long project."""
    if live_server_proc.url in MADE:
        return MADE[live_server_proc.url]
    async with live_server_proc.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": TITLE}))
        question = await live_server_proc.wait_for_question(TITLE)
        assert (await live_server_proc.answer_via_api(question["id"], "Python 3.13 on the runners")).status_code == 200
        await asyncio.wait_for(call, 15)
    sid = str(uuid.uuid4())
    body = json.loads((FIXTURES / "UserPromptSubmit.json").read_text())
    body.update(session_id=sid, cwd=CWD)
    assert (await hook(live_server_proc, body)).status_code == 200
    guid = await live_server_proc.open_session(name=f"Pages: a session of {LONG}", project=PROJECT)
    MADE[live_server_proc.url] = {"question": question["id"], "host": sid, "session": guid}
    return MADE[live_server_proc.url]


async def page_at(browser: Browser, server: LiveServer, width: int, height: int) -> Page:
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, server)
    return page


async def assert_fits(page: Page, name: str, width: int) -> None:
    assert await page.evaluate(SMALL_OR_WIDE) == [], f"{name} at {width} px"
    assert await serious_violations(page) == [], f"{name} at {width} px"
    await page.screenshot(path=str(ARTIFACTS / f"pages-{name}-{width}.png"), full_page=True)


async def test_history_is_a_wide_table_with_one_line_dates_and_marked_hits(
    live_server_proc: LiveServer, browser: Browser, past_work: dict[str, str]
) -> None:
    page = await page_at(browser, live_server_proc, 1440, 900)
    await page.goto(f"{live_server_proc.url}/history/?q=python")
    table = page.locator("table.history")
    await expect(table.locator("thead")).to_be_visible()
    assert (await table.bounding_box() or {"width": 0})["width"] > 1200, "the table uses the wide screen"
    cells: list[dict[str, Any]] = await table.evaluate(CELLS)
    assert cells, "the search finds the question"
    for cell in cells:
        if cell["column"] in ("Asked", "Asker", "By", "Waited"):
            assert cell["lines"] <= 1, f"{cell['column']} wraps: {cell}"
    row = table.locator("tbody tr", has_text="for the deploy job")
    await expect(row).to_have_count(1)
    await expect(row.locator("td.text").first).not_to_contain_text("**")
    await expect(row.locator("mark").first).to_have_text("Python")
    await expect(row.locator("mark")).to_have_count(2)  # the question's word and the answer's
    await assert_fits(page, "history", 1440)
    await page.close()


async def test_history_stacks_as_cards_on_a_phone(
    live_server_proc: LiveServer, browser: Browser, past_work: dict[str, str]
) -> None:
    page = await page_at(browser, live_server_proc, 390, 844)
    await page.goto(f"{live_server_proc.url}/history/?q=python")
    table = page.locator("table.history")
    await expect(table.locator("thead")).to_be_hidden()
    cells: list[dict[str, Any]] = await table.evaluate(CELLS)
    assert cells
    assert {cell["display"] for cell in cells} == {"block"}, "each cell a line of its card"
    await assert_fits(page, "history", 390)
    await page.close()


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
async def test_sessions_and_a_session_with_a_long_cwd_fit_the_screen(
    live_server_proc: LiveServer, browser: Browser, past_work: dict[str, str], width: int, height: int
) -> None:
    page = await page_at(browser, live_server_proc, width, height)
    await page.goto(f"{live_server_proc.url}/sessions/")
    table = page.locator("table.history.sessions")
    await expect(table.locator("tbody tr", has_text="Pages: a session of")).to_have_count(1)
    if width >= 1024:
        await expect(table.locator("thead")).to_be_visible()
        cells: list[dict[str, Any]] = await table.evaluate(CELLS)
        assert all(cell["lines"] <= 1 for cell in cells if cell["column"] in ("Project", "Agent", "Last activity"))
    else:
        await expect(table.locator("thead")).to_be_hidden()
    await assert_fits(page, "sessions", width)
    await page.goto(f"{live_server_proc.url}/sessions/{past_work['host']}/")
    await expect(page.get_by_role("heading", level=1)).to_contain_text(CWD)
    await assert_fits(page, "session-long-cwd", width)
    await page.goto(f"{live_server_proc.url}/questions/{past_work['question']}/")
    await expect(page.get_by_role("heading", level=1)).to_contain_text("which Python for the deploy job?")
    await assert_fits(page, "question-long-title", width)
    await page.close()
