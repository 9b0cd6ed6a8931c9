"""The dashboard in a real browser: Debian's chromium, driven by Playwright (never a downloaded browser)."""

from __future__ import annotations

import asyncio
import re

import pytest
from playwright.async_api import Browser, expect

from testing.browser import ARTIFACTS, log_in, open_question
from testing.live import LiveServer


async def test_a_question_arrives_live_and_a_click_answers_the_agent(
    live_server_proc: LiveServer, browser: Browser
) -> None:
    page = await browser.new_page()
    await log_in(page, live_server_proc)

    text = "Which **migration** strategy?"
    options = [
        {"value": "blue-green", "label": "Blue/green", "description": "Two stacks, switch traffic"},
        {"value": "in-place", "label": "In place"},
    ]
    async with live_server_proc.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text, "options": options}))

        card = await open_question(page, "Which migration strategy?")
        await expect(card).to_be_visible(timeout=10_000)  # pushed over the WebSocket: no reload
        await expect(card.locator("strong", has_text="migration")).to_be_visible()  # markdown rendered
        await expect(card).to_contain_text("agent-a")
        await expect(page.locator("#pending-count")).not_to_have_text("0")
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / "dashboard-question.png"), full_page=True)

        # Send with nothing chosen: said next to the answer box, nothing sent (issue 39).
        await card.get_by_role("button", name="Send answer").click()
        await expect(card.get_by_role("alert")).to_have_text("Choose one of the options, or write your own answer.")
        assert not call.done()
        await card.get_by_role("radio", name="Blue/green").check()  # chosen, not sent (issue 29)
        await asyncio.sleep(0.5)
        assert not call.done(), "a click on an option must not send it"
        await card.get_by_role("button", name="Send answer").click()
        result = await asyncio.wait_for(call, 30)

    assert result.structured_content == {"answer": "blue-green"}
    await expect(card).to_have_count(0)
    await expect(page.locator(".toast", has_text="Answer sent to agent-a")).to_be_visible()


async def test_a_free_text_answer_and_the_history_page(live_server_proc: LiveServer, browser: Browser) -> None:
    page = await browser.new_page()
    await log_in(page, live_server_proc)
    text = "What should the release be called?"
    async with live_server_proc.mcp("2026-07-28") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        card = await open_question(page, text)
        await expect(card).to_be_visible(timeout=10_000)

        await card.get_by_role("button", name="Send answer").click()  # empty: refused, nothing changes
        await expect(card.get_by_role("alert")).to_have_text("The answer is empty.")
        assert not call.done()

        await card.get_by_label("Your answer").fill("Aurora")
        await card.get_by_role("button", name="Send answer").click()
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {"answer": "Aurora"}

    await page.get_by_role("link", name="History").click()
    row = page.locator("tr", has_text=text)
    await expect(row).to_contain_text("Aurora")
    await expect(row).to_contain_text(live_server_proc.username)
    await expect(row).to_contain_text("Answered")


async def test_a_status_bar_follows_lifecycle_events_live(live_server_proc: LiveServer, browser: Browser) -> None:
    page = await browser.new_page()
    await log_in(page, live_server_proc)
    async with live_server_proc.mcp("legacy") as client:
        await client.call_tool(
            "submit_lifecycle_event",
            {
                "event_type": "phase-started",
                "phase_name": "Refactor auth",
                "phase_number": "3",
                "step": 2,
                "total_steps": 5,
            },
        )
    bar = page.locator("#status-bar")
    # One line until asked for more (issue 29); opened, it stays open across live pushes.
    await expect(bar.locator("summary")).to_contain_text(re.compile(r"\d+ agents? at work"))
    assert (await bar.bounding_box() or {"height": 999})["height"] < 60
    await bar.locator("summary").click()
    await expect(bar.locator(".agents-now")).to_be_visible()
    await expect(bar).to_contain_text("Phase started")
    await expect(bar).to_contain_text("Phase 3: Refactor auth")
    await expect(bar).to_contain_text("step 2 of 5")
    # This agent's line: earlier tests on this worker's server left other agents' lines with their own steps.
    line = bar.locator(".agents-now li", has_text="Phase 3: Refactor auth")
    await expect(line.locator("progress")).to_have_attribute("value", "2")


async def test_one_of_each_rich_kind_answered_in_the_browser(live_server_proc: LiveServer, browser: Browser) -> None:
    page = await browser.new_page(viewport={"width": 420, "height": 900})  # a narrow screen
    await log_in(page, live_server_proc)

    async with live_server_proc.mcp("legacy", path="/mcp/askme+clifford") as client:
        # Multiple choice: two selections, one comment, then "I'm done".
        mc = asyncio.create_task(
            client.call_tool(
                "ask-multiple-choice",
                {
                    "questions": [
                        {"text": "Which browsers must we support?", "options": ["Chrome", "Firefox", "Safari"]}
                    ]
                },
            )
        )
        card = await open_question(page, "Which browsers must we support?")
        await expect(card).to_be_visible(timeout=10_000)
        await card.get_by_label("Chrome", exact=True).check()
        await card.get_by_label("Comment on Chrome").fill("most users")
        await card.get_by_label("Safari", exact=True).check()
        await card.get_by_role("button", name="Submit — I'm done answering").click()
        mc_result = (await asyncio.wait_for(mc, 30)).structured_content
        assert mc_result is not None
        assert mc_result["completionStatus"] == "done"
        assert mc_result["answers"][0]["selections"] == [
            {"option": "Chrome", "comment": "most users"},
            {"option": "Safari", "comment": None},
        ]

        # Hypotheses, rated with the keyboard.
        hyp = asyncio.create_task(
            client.call_tool(
                "challenge-hypothesis",
                {
                    "title": "Flaky test causes",
                    "description": "Seen 3 times this week.",
                    "hypotheses": ["Clock skew", "Shared tmp dir"],
                },
            )
        )
        card = await open_question(page, "Flaky test causes")
        await expect(card).to_be_visible(timeout=10_000)
        await (
            card.get_by_role("radiogroup", name="Agreement with: Clock skew").get_by_label("Somewhat disagree").check()
        )
        shared = card.get_by_role("radiogroup", name="Agreement with: Shared tmp dir").get_by_label("Fully agree")
        await shared.focus()
        await page.keyboard.press("Space")
        await card.get_by_label("Comment on: Shared tmp dir").fill("two jobs write /tmp/x")
        await card.get_by_role("button", name="Send ratings").click()
        hyp_result = (await asyncio.wait_for(hyp, 30)).structured_content
        assert hyp_result is not None
        assert [(r["agreement"], r["comment"]) for r in hyp_result["ratings"]] == [
            (3, None),
            (7, "two jobs write /tmp/x"),
        ]

        # Choose next: a tile with a message.
        nxt = asyncio.create_task(
            client.call_tool(
                "choose-next",
                {
                    "title": "What next?",
                    "description": "The <script>alert('x')</script> migration is done. [docs](javascript:alert(1))",
                    "options": [
                        {"id": "deploy", "title": "Deploy", "description": "Ship to prod", "icon": "🚀"},
                        {"id": "tests", "title": "More tests", "description": "Cover the edge cases"},
                    ],
                },
            )
        )
        card = await open_question(page, "What next?")
        await expect(card).to_be_visible(timeout=10_000)
        assert await card.locator("script").count() == 0
        assert await card.locator("a[href^='javascript']").count() == 0
        await card.get_by_label("Message (optional)").fill("after lunch")
        await card.get_by_role("radio", name="More tests").check()
        await card.get_by_role("button", name="Send choice").click()
        nxt_result = (await asyncio.wait_for(nxt, 30)).structured_content
        assert nxt_result == {
            "action": "selected",
            "selectedOption": {"id": "tests", "title": "More tests"},
            "message": "after lunch",
        }

        # An open question and a help request, answered by typing.
        one = asyncio.create_task(client.call_tool("ask-one-question", {"question": "Which *branch* to release from?"}))
        card = await open_question(page, "to release from?")
        await expect(card).to_be_visible(timeout=10_000)
        await card.get_by_label("Your answer").fill("release/2.4")
        await card.get_by_role("button", name="Send answer").click()
        assert (await asyncio.wait_for(one, 30)).structured_content == {"answer": "release/2.4"}

        helped = asyncio.create_task(
            client.call_tool(
                "request_help", {"task": "Rotate keys", "reason": "No vault access", "question": "Who has access?"}
            )
        )
        card = await open_question(page, "Who has access?")
        await expect(card).to_be_visible(timeout=10_000)
        await card.get_by_label("Your answer").fill("Ask Dana")
        await card.get_by_role("button", name="Send answer").click()
        assert (await asyncio.wait_for(helped, 30)).structured_content == {"answer": "Ask Dana"}

        # A blocked agent, dismissed.
        help_call = asyncio.create_task(
            client.call_tool(
                "request_help", {"task": "Upgrade Django", "reason": "A test hangs", "question": "Skip it?"}
            )
        )
        card = await open_question(page, "Skip it?")
        await expect(card).to_be_visible(timeout=10_000)
        await expect(card).to_contain_text("blocked, asks for help")
        await expect(card).to_contain_text("Upgrade Django")
        await page.screenshot(path=str(ARTIFACTS / "dashboard-help-narrow.png"), full_page=True)
        await card.get_by_text("Dismiss…", exact=True).click()  # two steps (issue 39)
        await card.get_by_role("button", name="Dismiss — let the agent proceed on its own").click()
        help_result = (await asyncio.wait_for(help_call, 30)).structured_content
        assert help_result is not None
        assert help_result["status"] == "dismissed"
        await expect(card).to_have_count(0)


async def test_the_session_page_follows_an_agent_live(live_server_proc: LiveServer, browser: Browser) -> None:
    guid = await live_server_proc.open_session(name="Live session page", project="web")
    page = await browser.new_page()
    await log_in(page, live_server_proc)
    await page.goto(f"{live_server_proc.url}/sessions/")
    row = page.locator("tr", has_text="Live session page")
    await expect(row).to_be_visible()
    await row.get_by_role("link").click()
    await expect(page.locator("#connection")).to_have_text("live")
    progress = page.locator("#session-progress")
    await expect(progress).to_have_attribute("value", "0")

    async with live_server_proc.mcp("legacy", path="/mcp/progress") as client:
        await client.call_tool("notify_ack", {"guid": guid})
        await client.call_tool("send_progress", {"guid": guid, "percent": 40})
        await expect(progress).to_have_attribute("value", "40")
        await client.call_tool("send_status", {"guid": guid, "message": "Running the tests", "phase": "verifying"})
        await expect(page.locator("#session-state")).to_contain_text("Running the tests")
        await client.call_tool("send_progress", {"guid": guid, "percent": 90})
        await expect(progress).to_have_attribute("value", "90")
        await client.call_tool("send_response", {"guid": guid, "content": "All **green**."})
        await client.call_tool("notify_complete", {"guid": guid, "success": True})

    await expect(page.locator(".banner.ok")).to_contain_text("Completed successfully")
    await expect(page.locator(".response strong")).to_have_text("green")
    await expect(page.locator("svg.timeline polyline.progress")).to_have_count(1)
    await page.screenshot(path=str(ARTIFACTS / "session-page.png"), full_page=True)
    await page.goto(f"{live_server_proc.url}/sessions/")
    await expect(page.locator("tr", has_text="Live session page")).to_contain_text("completed")


async def test_toasts_never_cover_what_a_person_clicks(live_server_proc: LiveServer, browser: Browser) -> None:
    page = await browser.new_page(viewport={"width": 380, "height": 640})
    await log_in(page, live_server_proc)
    await page.evaluate(
        """() => { for (let i = 0; i < 8; i++) {
            const toast = document.createElement("p");
            toast.className = "toast";
            toast.textContent = "Answer sent " + i;
            document.getElementById("toasts").append(toast); } }"""
    )
    box = await page.locator("#toasts").bounding_box()
    assert box is not None
    under = await page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).closest('#toasts') === null",
        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
    )
    assert under, "a click on a toast must reach the page beneath it"
    await expect(page.locator(".toast")).to_have_count(0, timeout=15_000)  # faded and removed


async def test_the_title_counts_waiting_questions_and_opted_in_notifications_fire(
    live_server_proc: LiveServer, browser: Browser
) -> None:
    context = await browser.new_context()
    # Stand in for the browser's Notification API (headless has no notification centre).
    await context.add_init_script(
        """window.__notified = [];
        window.Notification = function (title, options) { window.__notified.push([title, options.body]); };
        window.Notification.permission = "granted";
        window.Notification.requestPermission = async () => "granted";"""
    )
    page = await context.new_page()
    await log_in(page, live_server_proc)
    toggle = page.get_by_role("button", name="Notify me of new questions")
    await toggle.click()
    await expect(page.locator("#notify-toggle")).to_have_text("Notifications on")

    text = "Will the tab title count me?"
    async with live_server_proc.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        await expect(page.locator("article.question", has_text=text)).to_be_visible(timeout=10_000)
        count = int(await page.locator("#pending-count").inner_text())
        await expect(page).to_have_title(f"({count}) Questions · Hook Bridge")
        notified = await page.evaluate("window.__notified")
        assert ["agent-a asks", text] in [list(n) for n in notified]
        question = await live_server_proc.wait_for_question(text)
        await live_server_proc.answer_via_api(question["id"], "counted")
        await asyncio.wait_for(call, 30)
    await context.close()


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
async def test_an_agent_that_stops_waiting_is_marked_on_its_card_and_the_typed_answer_stays(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, live_server_proc)
    text = f"Keep my draft when the agent leaves ({width})?"
    async with live_server_proc.mcp("2026-07-28") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text}))
        card = await open_question(page, text)
        await expect(card).to_be_visible(timeout=10_000)
        notice = card.locator(".agent-state")
        await expect(notice).to_be_hidden()  # an agent is waiting: nothing to say
        await card.get_by_label("Your answer").fill("Half-written reply")
        call.cancel()  # the agent's host gives up; leaving the client closes its connection
    await expect(notice).to_contain_text("The agent stopped waiting; it usually asks again", timeout=10_000)
    await expect(card.get_by_label("Your answer")).to_have_value("Half-written reply")  # not re-rendered

    box, viewport = await notice.bounding_box(), page.viewport_size
    field = await card.get_by_label("Your answer").bounding_box()
    assert box is not None
    assert field is not None
    assert viewport is not None
    assert box["x"] >= 0, box
    assert box["x"] + box["width"] <= viewport["width"], box
    assert box["y"] + box["height"] <= field["y"], "the notice sits above the answer box, not over it"
    ARTIFACTS.mkdir(exist_ok=True)
    await card.scroll_into_view_if_needed()
    await page.screenshot(path=str(ARTIFACTS / f"dashboard-agent-left-{width}.png"))

    await card.get_by_label("Your answer").fill("Finished reply")
    await card.get_by_role("button", name="Send answer").click()
    await expect(card).to_have_count(0)
    async with live_server_proc.mcp("legacy") as client:
        result = await asyncio.wait_for(client.call_tool("ask_question", {"question": text}), 30)
    assert result.structured_content == {"answer": "Finished reply"}
