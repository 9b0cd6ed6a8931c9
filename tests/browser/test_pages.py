"""The lists of past work use the screen (issue 29 point 5), in Debian's chromium at 1440 and 390 px.

History and sessions are tables from 1024 px on, their dates and names each on one line; below that their
rows stack as cards. Nothing is wider than a phone's screen with a 120-character title, cwd or project. An
agent's markdown reads as words in titles and lists, never as `**` marks, and search hits are marked.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.types import ImageContent
from playwright.async_api import Browser, Page, expect

from testing.browser import ARTIFACTS, SMALL_OR_WIDE, log_in, open_question, serious_violations, synced
from testing.claude_hooks import FIXTURES, hook
from testing.fakes import FakeSlack, fake_slack, mail_sink, notify_env
from testing.images import PNG
from testing.live import LiveServer

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
        await asyncio.wait_for(call, 30)
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


# Every pair of texts in the timeline whose boxes meet, and every bar label below AA contrast on its bar.
TIMELINE_PROBLEMS = """
(svg) => {
  const problems = [];
  const texts = [...svg.querySelectorAll("text")].map((text) => ({ text, box: text.getBBox() }));
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      const a = texts[i].box, b = texts[j].box;
      if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) {
        problems.push(["overlap", `${texts[i].text.textContent} / ${texts[j].text.textContent}`]);
      }
    }
  }
  const luminance = (colour) => {
    const [r, g, b] = colour.match(/[\\d.]+/g).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  for (const label of svg.querySelectorAll("text.bar-label")) {
    const bar = label.parentElement.querySelector("rect");
    const [inside, around] = [label.getBBox(), bar.getBBox()];
    if (inside.x < around.x || inside.x + inside.width > around.x + around.width) {
      problems.push(["past its bar", label.textContent]);
    }
    const pair = [luminance(getComputedStyle(label).fill), luminance(getComputedStyle(bar).fill)];
    const [l1, l2] = pair.sort((x, y) => y - x);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    if (getComputedStyle(bar).opacity !== "1" || ratio < 4.5) {
      problems.push(["contrast", `${label.textContent}: ${ratio.toFixed(2)}`]);
    }
  }
  // Nothing is cut by the drawing's edge or hidden past its scrolling frame's.
  const frame = svg.closest(".timeline-scroll").getBoundingClientRect();
  const wide = frame.width >= svg.getBoundingClientRect().width;
  for (const { text } of texts) {
    const box = text.getBoundingClientRect();
    const drawing = svg.getBoundingClientRect();
    if (box.right > drawing.right + 0.5 || box.left < drawing.left - 0.5) problems.push(["cut", text.textContent]);
    if (wide && box.right > frame.right + 0.5) problems.push(["hidden", text.textContent]);
  }
  return problems;
}
"""


@pytest.fixture
async def busy_session(live_server_proc: LiveServer) -> str:
    """agent-b's new session: eight phases with long names in a few seconds, the last still going on."""
    guid = await live_server_proc.open_session(token_name="agent-b", name="Pages: a busy run", project="timeline")
    async with live_server_proc.mcp("legacy", token_name="agent-b") as client:
        for n in range(1, 9):
            name = "Ship" if n % 2 else f"Reproduce, fix and verify the flaky checkout test on CI, try {n}"
            arguments = {"event_type": "phase-started", "phase_number": str(n), "phase_name": name}
            assert not (await client.call_tool("submit_lifecycle_event", arguments)).is_error
            arguments["event_type"] = "plan-started"
            assert not (await client.call_tool("submit_lifecycle_event", arguments)).is_error
            await asyncio.sleep(0.05 * n)
    return guid


@pytest.mark.parametrize(
    ("width", "height", "scheme"), [(1440, 900, "light"), (390, 844, "light"), (1440, 900, "dark")]
)
async def test_the_timeline_reads_at_a_glance(
    live_server_proc: LiveServer, browser: Browser, busy_session: str, width: int, height: int, scheme: str
) -> None:
    page = await browser.new_page(viewport={"width": width, "height": height}, color_scheme=scheme)  # type: ignore[arg-type]
    await log_in(page, live_server_proc)
    await page.goto(f"{live_server_proc.url}/sessions/{busy_session}/")
    # The page's socket sends its state on connect, swapping the timeline: measured before that, the drawing
    # measured could be the one swapped away (CI read a detached label's empty style).
    await expect(page.locator("body[data-synced]")).to_have_count(1, timeout=15_000)
    svg = page.locator("svg.timeline")
    await expect(svg).to_be_visible()
    assert await svg.evaluate(TIMELINE_PROBLEMS) == [], f"{width} px, {scheme}"
    if width >= 1024:  # a desktop sees the whole picture without scrolling it sideways
        frame = page.locator(".timeline-scroll")
        assert await frame.evaluate("(el) => el.scrollWidth <= el.clientWidth"), "the timeline scrolls at 1440 px"
    legend = page.locator(".timeline-legend ol.spans li")
    await expect(legend).to_have_count(16)  # eight phases and eight plans, each named by its number
    await expect(legend.first).to_contain_text("1 1 Ship")
    await expect(page.locator("svg.timeline text.bar-label", has_text="Ship").first).to_be_visible()
    await expect(page.locator("svg.timeline polygon.arrow")).to_have_count(2)  # the last phase and plan go on
    await page.locator("#session-timeline").screenshot(path=str(ARTIFACTS / f"timeline-{width}-{scheme}.png"))
    assert await page.evaluate(SMALL_OR_WIDE) == []
    assert await serious_violations(page) == []
    await page.close()


# Parts of a card (its reply buttons, its image field) stay inside the screen, off each other, and below the
# answer box when `below` names it: [selector of the parts, selector of the box or null].
PARTS_PROBLEMS = """
(card, [parts, below]) => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width) problems.push(["page wider than the screen", width]);
  const boxes = [...card.querySelectorAll(parts)].map((el) => el.getBoundingClientRect());
  const floor = below ? card.querySelector(below).getBoundingClientRect().bottom : -Infinity;
  boxes.forEach((a, i) => {
    if (a.right > width + 0.5) problems.push(["past the screen", i]);
    if (a.top < floor - 0.5) problems.push(["over the answer box", i]);
    boxes.slice(i + 1).forEach((b, j) => {
      const meet = a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
      if (meet) problems.push(["overlap", i, i + j + 1]);
    });
  });
  return problems;
}
"""
REPLIES = [".quick-replies > *", "textarea"]
IMAGES = [".images-field label, .image-previews li", None]


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
async def test_saved_and_recent_replies_are_a_click_or_a_key_away_and_never_send(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    page = await page_at(browser, live_server_proc, width, height)
    saved = f"Ship it at {width}, then watch the error rate for an hour."
    await page.goto(f"{live_server_proc.url}/replies/")
    await page.get_by_label("A reply to keep").fill(saved)
    await page.get_by_role("button", name="Save the reply", exact=True).click()
    await expect(page.locator("#reply-lists .reply-text", has_text=saved)).to_be_visible()
    await assert_fits(page, "replies", width)

    first, second = f"Replies: first at {width}?", f"Replies: second at {width}?"
    async with live_server_proc.mcp("legacy") as client:
        calls = [asyncio.create_task(client.call_tool("ask_question", {"question": q})) for q in (first, second)]
        await page.goto(f"{live_server_proc.url}/")
        await synced(page)
        card = await open_question(page, first)
        await expect(card).to_be_visible(timeout=10_000)
        chips = card.locator(".quick-replies button.reply-chip")
        await expect(chips.first).to_contain_text("Ship it at")
        box = card.get_by_label("Your answer")
        await chips.filter(has_text=f"Ship it at {width}").click()
        await expect(box).to_have_value(saved)
        assert (await live_server_proc.wait_for_question(first))["status"] == "pending", "a reply is put in, not sent"
        await box.fill("")
        await box.focus()
        index = await chips.evaluate_all(f"(all) => all.findIndex((c) => c.title === {saved!r})")
        await page.keyboard.press(f"Alt+{index + 1}")
        await expect(box).to_have_value(saved)
        await box.fill("Typed by hand: use the blue one")
        assert await card.evaluate(PARTS_PROBLEMS, REPLIES) == []
        await card.screenshot(path=str(ARTIFACTS / f"replies-card-{width}.png"))
        await card.get_by_role("button", name="Send answer").click()
        assert (await asyncio.wait_for(calls[0], 30)).structured_content == {
            "answer": "Typed by hand: use the blue one"
        }

        # What was just typed is now a recent reply under the next box, without reloading the page.
        other = await open_question(page, second)
        await expect(other.locator(".quick-replies .reply-chip.recent").first).to_have_attribute(
            "title", "Typed by hand: use the blue one"
        )
        question = await live_server_proc.wait_for_question(second)
        await live_server_proc.answer_via_api(question["id"], "done")
        await asyncio.wait_for(calls[1], 30)
    await page.close()


PASTE = """
async ([selector, name, type, b64]) => {
  const box = document.querySelector(selector);
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], name, { type }));
  box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
}
"""


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
async def test_a_pasted_screenshot_goes_with_the_answer_and_shows_in_the_history(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    png = base64.b64encode(PNG).decode()
    page = await page_at(browser, live_server_proc, width, height)
    text = f"Images: what does the header look like at {width}?"
    async with live_server_proc.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        card = await open_question(page, text)
        await expect(card).to_be_visible(timeout=10_000)
        box = f"#{await card.get_attribute('id')} textarea"
        await card.get_by_label("Your answer").fill("Like this, with the logo cut off")

        await page.evaluate(PASTE, [box, "notes.html", "text/html", base64.b64encode(b"<p>hi</p>").decode()])
        await expect(card.locator(".image-problem")).to_have_text("notes.html is not a PNG, JPEG, WebP or GIF image.")
        for n in range(5):
            await page.evaluate(PASTE, [box, f"shot-{n}.png", "image/png", png])
        await expect(card.locator(".image-previews img")).to_have_count(4)
        await expect(card.locator(".image-problem")).to_have_text("At most 4 images go with an answer.")
        await card.get_by_role("button", name="Remove image 2").click()
        await card.get_by_role("button", name="Remove image 2").click()
        await expect(card.locator(".image-previews img")).to_have_count(2)
        loaded = await card.locator(".image-previews img").evaluate_all("(all) => all.map((i) => i.naturalWidth)")
        assert loaded == [1, 1], "each preview shows its image"
        await expect(card.get_by_label("Your answer")).to_have_value("Like this, with the logo cut off")
        assert await card.evaluate(PARTS_PROBLEMS, IMAGES) == []
        await card.screenshot(path=str(ARTIFACTS / f"images-card-{width}.png"))
        assert (await live_server_proc.wait_for_question(text))["status"] == "pending", "pasting sends nothing"

        await card.get_by_role("button", name="Send answer").click()
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {"answer": "Like this, with the logo cut off"}
    images = [c for c in result.content[1:] if isinstance(c, ImageContent)]
    assert [(c.mime_type, base64.b64decode(c.data)) for c in images] == [("image/png", PNG)] * 2
    assert len(result.content) == 3

    # The card's own swap after the answer may still be loading (its images): wait for the page to settle, so the
    # navigation below is not aborted by one of the page's (CI: net::ERR_ABORTED once, on a quiet machine).
    await expect(card).to_have_count(0, timeout=30_000)
    await page.wait_for_load_state("load")
    await page.goto(f"{live_server_proc.url}/history/?q=header+look+like+at+{width}")
    thumbnails = page.locator("table.history .answer-images img")
    await expect(thumbnails).to_have_count(2)
    # Waited for, not looked at once: on a loaded machine the image is still on its way when the rows show.
    loaded = "() => [...document.querySelectorAll('table.history .answer-images img')].every((i) => i.complete)"
    await page.wait_for_function(loaded, timeout=15_000)
    assert await thumbnails.first.evaluate("(img) => img.complete && img.naturalWidth") == 1, "the image loads"
    await assert_fits(page, "history-images", width)
    await page.close()


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1440, 900)])
async def test_a_signed_link_answers_one_question_in_a_browser_with_no_login(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    text = f"Links: which release name at {width}?"
    logged_in = await page_at(browser, live_server_proc, width, height)
    async with live_server_proc.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        card = await open_question(logged_in, text)
        await expect(card).to_be_visible(timeout=10_000)
        link = await card.locator("button.copy-link").get_attribute("data-copy") or ""
        assert "/q/" in link
        link = live_server_proc.url + "/q/" + link.split("/q/", 1)[1]  # at the address this test server took

        stranger = await browser.new_context(viewport={"width": width, "height": height})  # no cookies, no login
        phone = await stranger.new_page()
        await phone.goto(link)
        await expect(phone.get_by_role("navigation")).to_have_count(0)
        form_card = phone.locator("article.question")
        await expect(form_card).to_contain_text(text)
        assert await phone.evaluate(SMALL_OR_WIDE) == []
        assert await serious_violations(phone) == []
        await phone.screenshot(path=str(ARTIFACTS / f"link-page-{width}.png"), full_page=True)
        assert (await live_server_proc.wait_for_question(text))["status"] == "pending", "opening the link sends nothing"
        await form_card.get_by_label("Your answer").fill("Hook Bridge 2.0")
        await form_card.get_by_role("button", name="Send answer").click()
        await expect(phone.get_by_role("heading", name="Sent")).to_be_visible()
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {"answer": "Hook Bridge 2.0"}
    answered = await live_server_proc.wait_for_question(text, status="answered")
    assert answered["answer"]["answeredBy"] == "someone with the link (via link)"
    await expect(card).to_have_count(0)  # the dashboard that copied the link sees it answered

    await phone.goto(link)  # used: no form any more
    await expect(phone.get_by_role("heading", level=1)).to_contain_text("no longer waits")
    await expect(phone.locator("main form")).to_have_count(0)
    await phone.goto(link[:-6] + "xxxxx/")  # tampered
    await expect(phone.get_by_role("heading", name="This link does not work")).to_be_visible()
    await expect(phone.locator("main form")).to_have_count(0)
    await phone.screenshot(path=str(ARTIFACTS / f"link-tampered-{width}.png"))
    await stranger.close()
    await logged_in.close()


@pytest.fixture(scope="module")
def notifying_server() -> Iterator[tuple[LiveServer, FakeSlack]]:
    with fake_slack() as slack, mail_sink() as mails:
        server = LiveServer(env_overrides=notify_env(slack, mails, "slack@0s,email@10m"))
        server.setup()
        try:
            yield server, slack
        finally:
            server.close()


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1440, 900)])
async def test_a_card_says_who_else_is_asked_and_when_and_a_failing_channel_says_so(
    notifying_server: tuple[LiveServer, FakeSlack], browser: Browser, width: int, height: int
) -> None:
    server, slack = notifying_server
    slack.errors.pop("chat.postMessage", None)
    page = await page_at(browser, server, width, height)
    text = f"Notify: which branch at {width}?"
    async with server.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        card = await open_question(page, text)
        await expect(card).to_be_visible(timeout=10_000)
        steps = card.locator(".next-steps")
        await expect(steps).to_contain_text("Slack: sent · e-mail at ")
        await expect(steps).to_contain_text("(in 10 min)")
        assert await card.evaluate(PARTS_PROBLEMS, REPLIES) == []
        await card.screenshot(path=str(ARTIFACTS / f"notify-card-{width}.png"))

        slack.errors["chat.postMessage"] = "channel_not_found"
        failing = f"Notify: and the tag at {width}?"
        other = asyncio.create_task(client.call_tool("ask_question", {"question": failing}))
        banner = page.locator("#delivery-health .banner")
        await expect(banner).to_have_text("Slack delivery failing: Slack said channel_not_found", timeout=10_000)
        await expect(page.locator("article.question", has_text=failing).locator(".next-steps")).to_contain_text(
            "Slack: failed (Slack said channel_not_found)"
        )
        assert await page.evaluate(SMALL_OR_WIDE) == []
        violations = await serious_violations(page)
        assert violations == [], json.dumps(violations)
        await page.screenshot(path=str(ARTIFACTS / f"notify-failing-{width}.png"))
        for asked in (text, failing):
            question = await server.wait_for_question(asked)
            await server.answer_via_api(question["id"], "main")
        await asyncio.wait_for(asyncio.gather(call, other), 30)
    await page.close()


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
async def test_analytics_leads_with_the_figures_and_fits_the_screen(
    live_server_proc: LiveServer, browser: Browser, past_work: dict[str, str], width: int, height: int
) -> None:
    """Issue 42: how long agents wait — the seven figures above the fold (issue 55 adds dismissed and withdrawn),
    each day's bars, the breakdowns; the picker says the window the page shows."""
    page = await page_at(browser, live_server_proc, width, height)
    await page.get_by_role("link", name="Analytics").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("How long agents wait")
    await expect(page.get_by_label("Asked in")).to_have_value("30")
    figures = page.locator("dl.figures > div")
    await expect(figures).to_have_count(7)
    for i in range(7):
        box = await figures.nth(i).bounding_box()
        assert box is not None
        assert box["y"] + box["height"] <= height, f"figure {i} below the fold at {width} px"
    answered = int(await page.locator("dl.figures dd").nth(1).inner_text())
    assert answered >= 1, "the past work's answer is counted"
    await expect(page.locator("figure.chart rect.asked")).to_have_count(30)
    chart = await page.locator("figure.chart svg").bounding_box()
    assert chart is not None
    assert chart["width"] <= width
    assert chart["height"] > 100
    await expect(page.locator("table.figures-table").nth(1)).to_contain_text("Project")
    if width < 640:
        await expect(page.locator("table.figures-table thead").nth(1)).to_be_hidden()
    await page.get_by_label("Asked in").select_option("7")
    await page.get_by_role("button", name="Show").click()
    await expect(page).to_have_url(f"{live_server_proc.url}/analytics/?days=7")
    await expect(page.locator("figure.chart rect.asked")).to_have_count(7)
    await expect(page.get_by_label("Asked in")).to_have_value("7")
    await assert_fits(page, "analytics", width)
    await page.close()
