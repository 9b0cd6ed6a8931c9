"""The dashboard for a team, in Debian's chromium: who asks from where and when, and a queue filtered in the URL."""

from __future__ import annotations

import asyncio
import re

from playwright.async_api import Browser, expect

from testing.browser import ARTIFACTS, listed, log_in, open_question
from testing.live import LiveServer


async def test_a_filtered_queue_is_in_the_url_and_stays_filtered_live(
    live_server_proc: LiveServer, browser: Browser
) -> None:
    page = await browser.new_page(viewport={"width": 390, "height": 844})
    await log_in(page, live_server_proc)
    guid = await live_server_proc.open_session(token_name="agent-b", name="Docs run", project="docs")
    async with (
        live_server_proc.mcp("legacy", token_name="agent-a") as a,
        live_server_proc.mcp("legacy", token_name="agent-b") as b,
    ):
        from_b = asyncio.create_task(b.call_tool("ask_question", {"question": "Filter: from b?"}))
        card_b = await open_question(page, "Filter: from b?")
        await expect(card_b).to_be_visible(timeout=10_000)
        await expect(card_b.locator(".session-link")).to_have_text("docs · Docs run")
        await expect(card_b.locator("time")).to_have_text("just now")
        await expect(card_b.locator("time")).to_have_attribute(
            "title", re.compile(r"^Asked \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
        )

        await page.goto(f"{live_server_proc.url}/?agent=agent-b")  # a bookmarked view
        await expect(page.locator("#connection")).to_have_text("live")
        await expect(page.locator(".queue-filters select[name=agent]")).to_have_value("agent-b")
        from_a = asyncio.create_task(a.call_tool("ask_question", {"question": "Filter: from a?"}))
        question_a = await live_server_proc.wait_for_question("Filter: from a?")
        card_a = page.locator(f"#question-{question_a['id']}")
        await expect(card_a).to_be_attached(timeout=10_000)  # pushed live...
        await expect(card_a).to_be_hidden()  # ...and filtered out
        await listed(page, "Filter: from b?")

        # A project is a real one (issue 55): the session's own label ("docs") is its folder, never a project.
        projects = page.locator(".queue-filters select[name=project] option")
        assert await projects.all_inner_texts() == ["All", "default"]
        await page.locator(".queue-filters select[name=project]").select_option("default")
        assert "project=default" in page.url
        await expect(card_a).to_be_hidden()  # still filtered by agent
        await page.locator(".queue-filters select[name=agent]").select_option("")
        await expect(card_a).to_be_attached()
        await listed(page, "Filter: from a?")  # both agents' tokens are in project default
        await page.screenshot(path=str(ARTIFACTS / "dashboard-filtered-390.png"), full_page=True)

        for question in ("Filter: from a?", "Filter: from b?"):
            asked = await live_server_proc.wait_for_question(question)
            assert (await live_server_proc.answer_via_api(asked["id"], "ok")).status_code == 200
        await asyncio.wait_for(asyncio.gather(from_a, from_b), 30)
    assert guid


async def test_a_claim_shows_on_another_dashboard_at_once_and_lapses(
    claim_server: LiveServer, browser: Browser
) -> None:
    mine, theirs = await browser.new_page(), await browser.new_page(viewport={"width": 390, "height": 844})
    await log_in(mine, claim_server)
    await log_in(theirs, claim_server)
    async with claim_server.mcp("legacy") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": "Claim: which port?"}))
        card = await open_question(mine, "Claim: which port?")
        elsewhere = await open_question(theirs, "Claim: which port?")
        await expect(elsewhere).to_be_visible(timeout=10_000)
        await card.get_by_role("button", name="I'm answering this").click()
        holder = elsewhere.locator(".claim-holder")
        # The same person in another browser: their own claim reads as theirs (issue 29).
        await expect(holder).to_have_text("You are answering", timeout=1_000)
        await expect(holder).to_have_attribute("data-holder", claim_server.username)
        await theirs.screenshot(path=str(ARTIFACTS / "dashboard-claimed-390.png"), full_page=True)
        await expect(holder).to_have_count(0, timeout=4_000)  # 2 s without activity on this server

        # As in the second before this page's own once-a-second sweep: its line still carries the passed time.
        await card.locator(".claim").evaluate(
            "line => { line.dataset.expires = new Date(Date.now() - 500).toISOString(); }"
        )
        await card.get_by_label("Your answer").fill("8080")  # typing claims again
        await expect(holder).to_have_text("You are answering", timeout=1_000)
        await elsewhere.get_by_label("Your answer").fill("9090")  # a draft in the browser that loses
        await card.get_by_role("button", name="Send answer").click()
        assert (await asyncio.wait_for(call, 30)).structured_content == {"answer": "8080"}
        # The losing browser keeps its draft, says who answered what in a neutral colour, and drops the claim.
        banner = elsewhere.locator(".resolution")
        await expect(banner).to_contain_text("was answered by")
        await expect(banner).to_contain_text("8080")
        await expect(elsewhere.get_by_label("Your answer")).to_have_value("9090")
        await expect(elsewhere.locator(".claim")).to_be_hidden()
        colour = await banner.evaluate("b => getComputedStyle(b).backgroundColor")
        assert colour == "rgb(238, 241, 246)", "the winner's answer is news here, not a success"
