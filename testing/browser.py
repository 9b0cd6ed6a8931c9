"""Driving Debian's chromium: logging in, the layout and accessibility checks every page test makes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.async_api import Locator, Page, expect
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from testing.live import PASSWORD, ROOT, LiveServer

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


async def log_in(page: Page, server: LiveServer) -> None:
    await page.goto(f"{server.url}/")
    await expect(page).to_have_url(f"{server.url}/accounts/login/?next=/")
    await page.get_by_label("Username").fill(server.username)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Log in").click()
    await expect(page.get_by_role("heading", name="Waiting for an answer")).to_be_visible()
    # The socket's handshake: waited for as long as the state after it (5 s were missed once on a busy machine).
    await expect(page.locator("#connection")).to_have_text("live", timeout=30_000)
    # The state the socket sends on connect replaces the list the page was served with: wait for it, so
    # nothing a test holds is swapped away under it (a thousand cards took seconds to arrive in CI).
    await expect(page.locator("body[data-synced]")).to_have_count(1, timeout=30_000)


async def synced(page: Page) -> None:
    """Wait until the dashboard is live and the state its socket sends on connect has replaced the list the
    page was served with: a radio checked before that is swapped away with its card."""
    await expect(page.locator("#connection")).to_have_text("live", timeout=30_000)
    await expect(page.locator("body[data-synced]")).to_have_count(1, timeout=30_000)


async def open_question(page: Page, needle: str, selector: str = "article.question") -> Locator:
    """The card that holds `needle`, open: on a phone the dashboard shows the triage list, and a tap on the card's
    row opens it full screen (issue 42); on a wide screen every card is in view already, and this only finds it."""
    card = page.locator(selector, has_text=needle)
    await card.wait_for(state="attached", timeout=10_000)
    if not await card.is_visible():
        back = page.locator(".back-bar button")
        if await back.is_visible():  # another question is open full screen: back to the list first
            try:
                await back.click(timeout=5_000)
            except PlaywrightTimeoutError:
                # It went back by itself meanwhile (the open question was answered and left): as asked.
                if await back.is_visible():
                    raise
        await page.locator(f'.triage-row[data-for="{await card.get_attribute("id")}"]').click()
        await expect(card).to_be_visible()
    return card


async def listed(page: Page, needle: str, selector: str = "article.question") -> Locator:
    """The row of the waiting question that holds `needle`, once it shows in the triage list (issue 42)."""
    card = page.locator(selector, has_text=needle)
    await card.wait_for(state="attached", timeout=10_000)
    row = page.locator(f'.triage-row[data-for="{await card.get_attribute("id")}"]')
    await expect(row).to_be_visible(timeout=10_000)
    return row


AXE = ROOT / "tests" / "ts" / "node_modules" / "axe-core" / "axe.min.js"


async def serious_violations(page: Page) -> list[dict[str, Any]]:
    # Evaluated over the DevTools protocol: the page's Content-Security-Policy refuses an inline script tag.
    await page.evaluate(AXE.read_text())
    found: list[dict[str, Any]] = await page.evaluate(
        """async () => {
          const { violations } = await axe.run(document, { resultTypes: ["violations"] });
          return violations
            .filter((v) => v.impact === "critical" || v.impact === "serious")
            .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")) }));
        }"""
    )
    return found


# Text smaller than 12 px, and anything pushing the page wider than the screen: (problem, where).
SMALL_OR_WIDE = """
() => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width) {
    problems.push(["page wider than the screen", `${document.documentElement.scrollWidth} > ${width}`]);
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const element = node.parentElement;
    if (!node.textContent.trim() || !element || !element.checkVisibility()) continue;
    if (element.closest("script, style, noscript")) continue;
    let size = parseFloat(getComputedStyle(element).fontSize);
    const svg = element.closest("svg");
    if (svg) {  // SVG text scales with its drawing: what counts is the size on the screen
      size *= svg.getBoundingClientRect().width / (svg.viewBox.baseVal.width || svg.getBoundingClientRect().width);
    }
    if (size < 11.5) {
      const where = `${element.tagName}.${element.className.baseVal ?? element.className}`;
      problems.push(["text below 12 px", `${where} ${size.toFixed(1)}px: ${node.textContent.trim().slice(0, 40)}`]);
    }
  }
  return problems;
}
"""


VIEWPORTS = [(1440, 900), (390, 844)]


# (kind, tool, arguments, text that finds its card)
CARDS: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "question",
        "ask_question",
        {
            "question": "Layout: which **cache** store?",
            "options": [
                {"value": "redis", "label": "Redis", "description": "Already run by the team"},
                {"value": "memcached", "label": "Memcached"},
            ],
        },
        "which cache store?",
    ),
    ("one-question", "ask-one-question", {"question": "Layout: which branch to cut?"}, "which branch to cut?"),
    (
        "multiple-choice",
        "ask-multiple-choice",
        {
            "questions": [
                {"text": "Layout: which platforms?", "options": ["Linux", "macOS", "Windows on ARM laptops"]},
                {"text": "Layout: which databases?", "options": ["PostgreSQL", "SQLite"]},
            ]
        },
        "which platforms?",
    ),
    (
        "hypothesis",
        "challenge-hypothesis",
        {
            "title": "Layout: why is the build slow?",
            "description": "It doubled this month.",
            "hypotheses": ["The cache is cold on every run", "A test sleeps"],
        },
        "why is the build slow?",
    ),
    (
        "choose-next",
        "choose-next",
        {
            "title": "Layout: what comes next?",
            "description": "The migration is done.",
            "options": [
                {"id": "deploy", "title": "Deploy", "description": "Ship it to production", "icon": "🚀"},
                {"id": "tests", "title": "More tests", "description": "Cover the edge cases first"},
            ],
        },
        "what comes next?",
    ),
    (
        "help",
        "request_help",
        {"task": "Layout: rotate the keys", "reason": "No vault access", "question": "Layout: who has access?"},
        "who has access?",
    ),
]


# What a person would see as broken, measured in the page: (problem, detail) pairs.
LAYOUT_PROBLEMS = """
(card) => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  const scrolls = (el) => {
    for (let node = el.parentElement; node; node = node.parentElement) {
      if (["auto", "scroll"].includes(getComputedStyle(node).overflowX)) return true;
    }
    return false;
  };
  if (document.documentElement.scrollWidth > width) {
    problems.push(["page wider than the screen", `${document.documentElement.scrollWidth} > ${width}`]);
  }
  for (const el of card.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    if (box.width && (box.left < -0.5 || box.right > width + 0.5) && !scrolls(el)) {
      problems.push(["wider than the screen", `${el.tagName}.${el.className} ${box.left}..${box.right}`]);
    }
  }
  for (const input of card.querySelectorAll("input[type=checkbox], input[type=radio]")) {
    const label = input.closest("label");
    if (!label) { problems.push(["no label", input.name]); continue; }
    const range = document.createRange();
    const texts = [...label.childNodes].filter((n) => n !== input && n.textContent.trim());
    if (!texts.length) { problems.push(["empty label", input.name]); continue; }
    range.setStartBefore(texts[0]);
    range.setEndAfter(texts[texts.length - 1]);
    const text = range.getBoundingClientRect();
    const box = input.getBoundingClientRect();
    const overlap = box.right > text.left && text.right > box.left && box.bottom > text.top && text.bottom > box.top;
    if (overlap) problems.push(["control overlaps its label", `${input.name}=${input.value}`]);
    const sameLine = Math.abs((box.top + box.bottom) / 2 - (text.top + text.bottom) / 2) < Math.max(box.height, 8);
    if (!sameLine || text.height > 2.5 * Math.max(box.height, 16)) {
      problems.push(["label not on the control's line", `${input.name}=${input.value}`]);
    }
  }
  return problems;
}
"""
