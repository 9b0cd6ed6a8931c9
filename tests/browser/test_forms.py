"""Every kind of question's answer form, at a desktop's and a phone's width, in Debian's chromium.

Nothing is wider than the screen, and every checkbox and radio sits on one line with its label's
text without overlapping it. Each card is saved as a screenshot (test-artifacts/) for a person to look at.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from testing.browser import ARTIFACTS, CARDS, LAYOUT_PROBLEMS, VIEWPORTS, log_in, open_question
from testing.live import LiveServer

# The scale changes its shape at 600 px: both sides of that line too.
SCALE_VIEWPORTS = [(600, 900), (599, 900)]


# Where the seven steps of each agreement scale sit: their centres, and the end labels' boxes.
SCALE_GEOMETRY = """
(card) => [...card.querySelectorAll(".scale")].map((scale) => ({
  steps: [...scale.querySelectorAll("input[type=radio]")].map((input) => {
    const box = input.getBoundingClientRect();
    return { x: box.left + box.width / 2, y: box.top + box.height / 2 };
  }),
  ends: [...scale.querySelectorAll(".scale-end")].filter((end) => end.offsetParent !== null).map((end) => {
    const box = end.getBoundingClientRect();
    return { left: box.left, right: box.right, text: end.textContent.trim() };
  }),
  names: [...scale.querySelectorAll(".step-name")].filter((name) => name.offsetParent !== null).length,
}))
"""


def check_scale(scales: list[dict[str, Any]], width: int) -> None:
    """A scale, never a grid: one row between its end labels at 600 px and more, a list of named steps below."""
    assert scales, "the hypothesis card has its scales"
    for scale in scales:
        steps = scale["steps"]
        assert len(steps) == 7
        xs, ys = [step["x"] for step in steps], [step["y"] for step in steps]
        if width >= 600:
            assert max(ys) - min(ys) < 2, f"seven steps on one row at {width} px: {ys}"
            assert xs == sorted(xs), xs
            assert len(set(xs)) == 7, xs
            assert [end["text"] for end in scale["ends"]] == ["Fully disagree", "Fully agree"]
            left, right = scale["ends"]
            assert left["right"] < min(xs) - 8, "the left end label before the row"
            assert right["left"] > max(xs) + 8, "the right end label after the row"
            assert scale["names"] == 0, "the row names its ends only"
        else:
            assert max(xs) - min(xs) < 2, f"one step a line at {width} px: {xs}"
            assert ys == sorted(ys), ys
            assert len(set(ys)) == 7, ys
            assert scale["names"] == 7, "each step says what it means"


async def check_cards(page: Page, width: int) -> None:
    for kind, _tool, _arguments, needle in CARDS:
        card = await open_question(page, needle)
        await expect(card).to_be_visible(timeout=10_000)
        problems = await card.evaluate(LAYOUT_PROBLEMS)
        assert problems == [], f"{kind} at {width} px: {problems}"
        if kind == "hypothesis":
            check_scale(await card.evaluate(SCALE_GEOMETRY), width)
        await card.scroll_into_view_if_needed()
        await card.screenshot(path=str(ARTIFACTS / f"form-{kind}-{width}.png"))


async def test_every_kind_of_form_fits_every_screen(live_server_proc: LiveServer, browser: Browser) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    async with live_server_proc.mcp("legacy", path="/mcp/maxsim+askme+clifford") as client:
        calls = [asyncio.create_task(client.call_tool(tool, arguments)) for _, tool, arguments, _ in CARDS]
        try:
            for width, height in VIEWPORTS + SCALE_VIEWPORTS:
                page = await browser.new_page(viewport={"width": width, "height": height})
                await log_in(page, live_server_proc)
                await check_cards(page, width)
                await page.close()
        finally:
            # Dismissed, so the shared server's dashboard is as the other tests expect it.
            async with live_server_proc.login() as http:
                for question in await live_server_proc.questions(status="pending"):
                    if question["question"].startswith("Layout:") or "Layout:" in str(question["payload"]):
                        await http.post(f"/questions/{question['id']}/dismiss")
            for result in await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 30):
                assert not isinstance(result, BaseException), result


async def test_a_refused_answer_keeps_what_was_typed_and_points_at_the_field(
    live_server_proc: LiveServer, browser: Browser
) -> None:
    page = await browser.new_page(viewport={"width": 390, "height": 844})
    await log_in(page, live_server_proc)
    arguments = {
        "title": "Kept: flaky causes",
        "description": "Seen twice",
        "hypotheses": ["Clock skew", "Shared tmp dir"],
    }
    async with live_server_proc.mcp("legacy", path="/mcp/askme") as client:
        call = asyncio.create_task(client.call_tool("challenge-hypothesis", arguments))
        card = await open_question(page, "Kept: flaky causes")
        await expect(card).to_be_visible(timeout=10_000)
        first = card.get_by_role("radiogroup", name="Agreement with: Clock skew")
        second = card.get_by_role("radiogroup", name="Agreement with: Shared tmp dir")
        await first.get_by_label("Agree", exact=True).check()
        await card.get_by_label("Comment on: Clock skew").fill("NTP was off")
        await card.get_by_label("Comment on: Shared tmp dir").fill("two jobs write /tmp/x")
        await card.get_by_role("button", name="Send ratings").click()  # the second is not rated: refused

        await expect(second).to_have_attribute("aria-invalid", "true")
        await expect(card.get_by_role("alert")).to_have_text("Rate hypothesis 2 on the scale from 1 to 7.")
        await expect(first.get_by_label("Agree", exact=True)).to_be_checked()
        await expect(card.get_by_label("Comment on: Clock skew")).to_have_value("NTP was off")
        await expect(card.get_by_label("Comment on: Shared tmp dir")).to_have_value("two jobs write /tmp/x")
        focused = await page.evaluate("document.activeElement && document.activeElement.name")
        assert focused == "h1", "the focus moves to the field at fault"
        await page.screenshot(path=str(ARTIFACTS / "form-refused-390.png"), full_page=True)
        assert not call.done()

        await page.keyboard.press("ArrowRight")  # a rating for the second, from the keyboard
        await card.get_by_role("button", name="Send ratings").click()
        result = (await asyncio.wait_for(call, 30)).structured_content
    assert result is not None
    assert [(r["hypothesis"], r["comment"]) for r in result["ratings"]] == [
        ("Clock skew", "NTP was off"),
        ("Shared tmp dir", "two jobs write /tmp/x"),
    ]


async def test_choose_next_asks_for_the_message_before_the_tiles(
    live_server_proc: LiveServer, browser: Browser
) -> None:
    page = await browser.new_page(viewport={"width": 390, "height": 844})
    await log_in(page, live_server_proc)
    arguments = {
        "title": "Order: what next?",
        "description": "The release is ready.",
        "options": [
            {"id": "a", "title": "Ship", "description": "now"},
            {"id": "b", "title": "Wait", "description": "a week"},
        ],
    }
    async with live_server_proc.mcp("legacy", path="/mcp/askme") as client:
        call = asyncio.create_task(client.call_tool("choose-next", arguments))
        card = await open_question(page, "Order: what next?")
        await expect(card).to_be_visible(timeout=10_000)
        message = await card.get_by_label("Message (optional)").bounding_box()
        tile = await card.locator(".tile", has_text="Ship").bounding_box()
        assert message is not None
        assert tile is not None
        assert message["y"] + message["height"] <= tile["y"], "the message box comes before the tiles"
        await card.get_by_label("Message (optional)").fill("after the freeze")
        await card.locator(".tile", has_text="Ship").click()  # chosen, not sent (issue 29)
        await asyncio.sleep(0.5)
        assert not call.done(), "a click on a tile must not send it"
        send = await card.get_by_role("button", name="Send choice").bounding_box()
        assert send is not None
        assert send["y"] + send["height"] <= 844, "Send is in view at the bottom of the card"
        await card.get_by_role("button", name="Send choice").click()
        result = (await asyncio.wait_for(call, 30)).structured_content
    assert result == {
        "action": "selected",
        "selectedOption": {"id": "a", "title": "Ship"},
        "message": "after the freeze",
    }


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_an_option_icon_no_font_can_draw_is_left_out_not_shown_as_an_empty_box(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    """Issue 55, point 10: choose-next's icons were empty boxes where the browser had no emoji font. A private-use
    code point has a glyph in no font; a letter has one in every font."""
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, live_server_proc)
    title = f"Icons ({width}): what next?"
    arguments = {
        "title": title,
        "description": "Two ways on.",
        "options": [
            {"id": "a", "title": "Ship", "description": "now", "icon": "\ue000"},
            {"id": "b", "title": "Wait", "description": "a week", "icon": "W"},
        ],
    }
    async with live_server_proc.mcp("legacy", path="/mcp/askme") as client:
        call = asyncio.create_task(client.call_tool("choose-next", arguments))
        card = await open_question(page, title)
        await expect(card).to_be_visible(timeout=10_000)
        await expect(card.locator(".tile", has_text="Ship").locator(".option-icon")).to_be_hidden()
        await expect(card.locator(".tile", has_text="Wait").locator(".option-icon")).to_be_visible()
        await expect(card.locator(".tile", has_text="Wait").locator(".option-icon")).to_have_text("W")
        await page.screenshot(path=str(ARTIFACTS / f"choose-next-icons-{width}.png"))
        await card.locator(".tile", has_text="Wait").click()
        await card.get_by_role("button", name="Send choice").click()
        result = (await asyncio.wait_for(call, 30)).structured_content
    assert result is not None
    assert result["selectedOption"] == {"id": "b", "title": "Wait"}


SEND_BARS_IN_VIEW = """() => [...document.querySelectorAll("#question-list > article.question .send-bar")]
    .filter((bar) => { const box = bar.getBoundingClientRect();
        return box.height > 0 && box.bottom > 0 && box.top < innerHeight
            && bar.closest("article").checkVisibility(); })
    .map((bar) => bar.closest("article").id)"""


async def test_at_1440_only_the_open_questions_send_bar_stays_on_screen(
    live_server_proc: LiveServer, browser: Browser
) -> None:
    """Issue 55, point 9: the next card's sticky "Send answer" showed at the bottom while choose-next was open."""
    page = await browser.new_page(viewport={"width": 1440, "height": 900})
    await log_in(page, live_server_proc)
    title = "Sticky: what comes next?"
    options = [{"id": f"o{n}", "title": f"Way {n}", "description": "A way on, in a line or two."} for n in range(6)]
    async with live_server_proc.mcp("legacy", path="/mcp/askme") as client:
        first = asyncio.create_task(
            client.call_tool("choose-next", {"title": title, "description": "Pick one.", "options": options})
        )
        await live_server_proc.wait_for_question(title)
        second = asyncio.create_task(client.call_tool("ask-one-question", {"question": "Sticky: and the name?"}))
        await live_server_proc.wait_for_question("Sticky: and the name?")
        card = await open_question(page, title)
        await page.locator(".triage-row", has_text=title).click()
        await expect(card).to_have_class(re.compile(r"\bopen\b"))
        in_view = await page.evaluate(SEND_BARS_IN_VIEW)
        assert in_view in ([], [await card.get_attribute("id")]), in_view
        await page.screenshot(path=str(ARTIFACTS / "sticky-send-bar-1440.png"))
        for task in (first, second):
            task.cancel()
        await asyncio.gather(first, second, return_exceptions=True)


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_first_run_says_how_to_connect_an_agent(
    empty_server: LiveServer, browser: Browser, width: int, height: int
) -> None:
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, empty_server)
    connect = page.get_by_role("region", name="Connect an agent")
    await expect(connect).to_contain_text(f"{empty_server.url}/mcp")
    await connect.get_by_role("button", name="Create an agent token for me").click()
    await expect(connect.get_by_role("status")).to_contain_text("shown only this once")
    command = connect.locator("pre.command", has_text="claude mcp add").first
    await expect(command).to_contain_text("Authorization: Bearer hb_")
    # Signing in needs no token at all: the same line without the header.
    sign_in = connect.locator("pre.command", has_text="claude mcp add").last
    await expect(sign_in).to_have_text(f"claude mcp add --transport http hookbridge {empty_server.url}/mcp")
    problems = await connect.evaluate(LAYOUT_PROBLEMS)
    assert problems == [], problems
    await page.screenshot(path=str(ARTIFACTS / f"first-run-{width}.png"), full_page=True)
    await expect(page.get_by_role("heading", name="Hook runs")).to_be_hidden()  # no hook plugin on this server


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_first_run_copies_the_claude_mcp_add_line_with_one_click(
    empty_server: LiveServer, browser: Browser, width: int, height: int
) -> None:
    context = await browser.new_context(
        viewport={"width": width, "height": height}, permissions=["clipboard-read", "clipboard-write"]
    )
    page = await context.new_page()
    await log_in(page, empty_server)
    connect = page.get_by_role("region", name="Connect an agent")
    row = connect.locator(".command-row", has_text="claude mcp add").first  # the token's line; the sign-in one follows
    await row.get_by_role("button", name="Copy").click()
    await expect(row.get_by_role("button", name="Copied")).to_be_visible()
    copied = await page.evaluate("navigator.clipboard.readText()")
    assert copied == await row.locator("pre").text_content()
    assert copied.startswith(f"claude mcp add --transport http hookbridge {empty_server.url}/mcp")
    await context.close()


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_first_run_answers_a_sample_question_before_any_agent_is_wired(
    empty_server: LiveServer, browser: Browser, width: int, height: int
) -> None:
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, empty_server)
    await page.get_by_role("button", name="Send a sample question").click()
    card = await open_question(page, "A sample question")
    await expect(card).to_be_visible(timeout=10_000)
    await expect(card).to_contain_text("Demo agent")
    problems = await card.evaluate(LAYOUT_PROBLEMS)
    assert problems == [], f"{width} px: {problems}"
    await card.screenshot(path=str(ARTIFACTS / f"first-run-sample-{width}.png"))

    await card.get_by_text("PostgreSQL").click()  # chosen, not sent
    asked = (await empty_server.questions(status="pending"))[0]
    assert asked["asker"] == "Demo agent"
    await card.get_by_role("button", name="Send answer").click()
    await expect(page.locator(".toast", has_text="Answer sent to Demo agent")).to_be_visible()
    await expect(card).to_have_count(0)
    answered = await empty_server.wait_for_question(asked["question"], status="answered")
    assert answered["answer"]["data"] == {"answer": "postgres"}
    await expect(page.get_by_role("button", name="Send a sample question")).to_be_visible()  # empty again


async def test_a_card_answered_elsewhere_keeps_what_was_typed_read_only(
    live_server_proc: LiveServer, browser: Browser
) -> None:
    page = await browser.new_page(viewport={"width": 390, "height": 844})
    await log_in(page, live_server_proc)
    typed_text, untouched_text = "Kept: which region for the cache?", "Kept: which colour for the logo?"
    async with live_server_proc.mcp("legacy") as client:
        typed_call = asyncio.create_task(client.call_tool("ask_question", {"question": typed_text}))
        untouched_call = asyncio.create_task(client.call_tool("ask_question", {"question": untouched_text}))
        untouched = await open_question(page, untouched_text)
        typed = await open_question(page, typed_text)  # the one open on the phone's screen, typed into
        await typed.get_by_label("Your answer").fill("eu-west-1, I think, because")

        for text in (typed_text, untouched_text):
            question = await live_server_proc.wait_for_question(text)
            assert (await live_server_proc.answer_via_api(question["id"], "eu-central-1")).status_code == 200
        await asyncio.wait_for(asyncio.gather(typed_call, untouched_call), 30)

    await expect(untouched).to_have_count(0)  # nothing typed: it simply goes
    banner = typed.get_by_role("status").filter(has_text="was answered by answer-bot: eu-central-1")
    await expect(banner).to_be_visible()
    await expect(banner).to_contain_text(typed_text)
    field = typed.get_by_label("Your answer")
    await expect(field).to_have_value("eu-west-1, I think, because")
    await expect(field).not_to_be_editable()
    await expect(typed.get_by_role("button", name="Send answer")).to_be_disabled()
    await page.screenshot(path=str(ARTIFACTS / "card-answered-elsewhere-390.png"), full_page=True)
    await banner.get_by_role("button", name="Close").click()
    await expect(typed).to_have_count(0)


async def press_j_until(page: Page, text: str) -> None:
    """j, as a person presses it, through the list until the row in focus is the question with `text`; then o
    opens it (issue 42). k first: j from the first row moves on, and the list starts at the top."""
    for _ in range(30):
        await page.keyboard.press("k")
    for _ in range(30):
        focused = await page.evaluate(
            "() => document.getElementById(document.activeElement?.dataset?.for || '')?.textContent || ''"
        )
        if text in focused:
            await page.keyboard.press("o")
            return
        await page.keyboard.press("j")
    raise AssertionError(f"j never reached the row of {text!r}")


async def test_a_person_answers_with_the_keyboard_alone(live_server_proc: LiveServer, browser: Browser) -> None:
    page = await browser.new_page(viewport={"width": 1440, "height": 900})
    await log_in(page, live_server_proc)
    choices = {"questions": [{"text": "Keys: which shells?", "options": ["bash", "zsh", "fish"]}]}
    options = [{"value": "a", "label": "Alpha"}, {"value": "b", "label": "Beta"}]
    async with live_server_proc.mcp("legacy", path="/mcp/maxsim+askme") as client:
        ticked = asyncio.create_task(client.call_tool("ask-multiple-choice", choices))
        await expect(page.locator("article.question", has_text="Keys: which shells?")).to_be_visible(timeout=10_000)
        picked = asyncio.create_task(
            client.call_tool("ask_question", {"question": "Keys: which one?", "options": options})
        )
        await expect(page.locator("article.question", has_text="Keys: which one?")).to_be_visible(timeout=10_000)

        await page.keyboard.press("?")
        await expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
        await page.keyboard.press("Escape")
        await expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_hidden()

        # j moves through the cards in the order they are shown, to the multiple choice (the server
        # may hold other tests' questions, and what someone gives up on soonest leads).
        await press_j_until(page, "Keys: which shells?")
        for key in ["1", "3", "Control+Enter"]:
            await page.keyboard.press(key)
        result = (await asyncio.wait_for(ticked, 30)).structured_content
        assert result is not None
        assert [s["option"] for s in result["answers"][0]["selections"]] == ["bash", "fish"]
        assert result["completionStatus"] == "done"

        # A digit chooses and Enter sends (issue 29): "2" alone leaves the question waiting.
        await press_j_until(page, "Keys: which one?")
        await page.keyboard.press("2")
        await asyncio.sleep(0.5)
        assert not picked.done(), "a digit must choose, not send"
        card = await open_question(page, "Keys: which one?")
        await expect(card.get_by_role("radio", name="Beta")).to_be_checked()
        await page.keyboard.press("Enter")
        assert (await asyncio.wait_for(picked, 30)).structured_content == {"answer": "b"}


async def test_multiple_choice_takes_an_answer_of_ones_own(live_server_proc: LiveServer, browser: Browser) -> None:
    page = await browser.new_page(viewport={"width": 390, "height": 844})
    await log_in(page, live_server_proc)
    choices = {"questions": [{"text": "Other: which editor?", "options": ["vim", "emacs"]}]}
    async with live_server_proc.mcp("legacy", path="/mcp/askme") as client:
        call = asyncio.create_task(client.call_tool("ask-multiple-choice", choices))
        card = await open_question(page, "Other: which editor?")
        await expect(card).to_be_visible(timeout=10_000)
        await card.get_by_label("Other").fill("helix")
        await card.get_by_role("button", name="Submit — I'm done answering").click()
        result = (await asyncio.wait_for(call, 30)).structured_content
    assert result is not None
    assert result["answers"][0] == {"question": "Other: which editor?", "selections": [], "other": "helix"}
