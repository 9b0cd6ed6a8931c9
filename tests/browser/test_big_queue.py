"""A thousand of the largest questions waiting (issue 27, point 2), in Debian's chromium at 1440 and 390 px:
the dashboard opens live with the first cards and a count, the rest comes on scroll or on a click, a card
too large for a message is cut down with a link, and a new question still arrives live."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from playwright.async_api import Browser, expect

from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, SMALL_OR_WIDE, log_in, open_question, serious_violations
from testing.live import LiveServer

FILL = """
from datetime import timedelta
from django.conf import settings
from django.utils import timezone
from questions.models import Question
from tokens.models import AgentToken
token = AgentToken.objects.get(name="agent-a")
largest = "Why is this so long? " * (settings.HOOKBRIDGE_MAX_QUESTION_LENGTH // 21)
options = [{"value": f"v{n}" + "x" * 190, "label": f"Option {n} " + "y" * 180, "description": "z" * 2000}
           for n in range(settings.HOOKBRIDGE_MAX_OPTIONS)]
start = timezone.now() - timedelta(hours=1)
Question.objects.bulk_create(
    [Question(asker=token, asker_name="agent-a", text=f"Big #{n}: {largest}", options=options,
              fingerprint=f"{n:064d}", created_at=start + timedelta(milliseconds=n)) for n in range(1000)]
)
huge = [{"value": f"h{n}", "label": "Huge " + "L" * 190, "description": "D" * 200_000} for n in range(3)]
Question.objects.create(asker=token, asker_name="agent-a", text="Too large for the queue: which of these?",
                        options=huge, fingerprint="f" * 64, created_at=start - timedelta(minutes=1))
"""


@pytest.fixture(scope="module")
def big_queue() -> Iterator[LiveServer]:
    server = LiveServer()
    server.setup()
    server.manage("shell", "-c", FILL)
    try:
        yield server
    finally:
        server.close()


# The first state can come in more than one message: a count of the cards taken as the total shows may be of
# those that came so far. Settled once the button counts exactly the rest.
SETTLED = """waiting => {
    const button = document.querySelector("#question-more button");
    const shown = document.querySelectorAll("#question-list article.question").length;
    return button !== null && button.textContent.trim() === `${waiting - shown} more waiting — show them`;
}"""


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
async def test_the_dashboard_stays_live_with_a_thousand_of_the_largest_questions(
    big_queue: LiveServer, browser: Browser, width: int, height: int
) -> None:
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, big_queue)
    await expect(page.locator("#connection")).to_have_text("live", timeout=15_000)
    await expect(page.locator("#pending-count")).to_have_text("1001")
    cards = page.locator("#question-list article.question")
    more = page.locator("#question-more button")
    await page.wait_for_function(SETTLED, arg=1001, timeout=10_000)
    first = await cards.count()
    assert 1 <= first < 1001

    # The oldest waits longest and leads: the cut-down card, with the way to its own page.
    too_large = page.locator("article.question.too-large")
    await expect(too_large).to_have_count(1)
    await open_question(page, "Too large for the queue", "article.question.too-large")  # a row on a phone
    await expect(too_large.locator(".notice a")).to_have_attribute(
        "href", "/questions/" + (await too_large.get_attribute("data-question-id") or "") + "/"
    )
    assert await too_large.evaluate(LAYOUT_PROBLEMS) == []
    await too_large.screenshot(path=str(ARTIFACTS / f"queue-too-large-card-{width}.png"))

    back = page.get_by_role("button", name="Back to all waiting questions")
    if await back.is_visible():  # the phone's list, under which the rest of the queue comes
        await back.click()
    await more.scroll_into_view_if_needed()  # revealed: the next page comes without a click
    await expect(cards).not_to_have_count(first, timeout=10_000)
    assert await cards.count() > first
    assert await page.evaluate(SMALL_OR_WIDE) == []
    assert await serious_violations(page) == []
    await page.screenshot(path=str(ARTIFACTS / f"queue-1000-{width}.png"))

    # Still live: the socket was not closed by a frame too large, so a new question arrives.
    text = f"Still live at {width} px?"
    async with big_queue.mcp("legacy", token_name="agent-b") as agent:
        call = asyncio.create_task(agent.call_tool("ask_question", {"question": text}))
        await expect(page.locator("#pending-count")).to_have_text("1002", timeout=10_000)
        await expect(page.locator("#connection")).to_have_text("live")
        asked = await big_queue.wait_for_question(text)
        assert (await big_queue.answer_via_api(asked["id"], "yes")).status_code == 200
        await asyncio.wait_for(call, 30)
    await expect(page.locator("#pending-count")).to_have_text("1001", timeout=10_000)
    await page.close()
