"""Only a deliberate act answers (issue 39), in Debian's chromium: Enter in a one-line box moves on and never
sends, Dismiss takes two clicks and says what the agent will be told, and key hints show only where there is a
keyboard. Screenshots go to test-artifacts/ for a person to look at."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import Browser, expect

from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, VIEWPORTS, listed, log_in, open_question, serious_violations
from testing.claude_hooks import hook, permission_request
from testing.live import LiveServer, serving


@pytest.fixture(scope="module")
def live_server_proc() -> Iterator[LiveServer]:
    """A server of this module's own: its questions, some left waiting, never reach another module's pages."""
    yield from serving()


# Long enough for a sent form to reach the server and the blocked call to return (it takes milliseconds).
SETTLE = 1.0


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_enter_in_a_one_line_box_sends_nothing_and_moves_to_the_next_box(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, live_server_proc)
    editor = f"Enter: which editor ({width})?"
    choices = {
        "questions": [
            {"text": editor, "options": ["vim", "emacs"]},
            {"text": "Enter: which terminal?", "options": ["kitty", "alacritty"]},
        ]
    }
    async with live_server_proc.mcp("legacy", path="/mcp/askme") as client:
        call = asyncio.create_task(client.call_tool("ask-multiple-choice", choices))
        card = await open_question(page, editor)
        await expect(card).to_be_visible(timeout=10_000)
        others = card.get_by_label("Other")
        await others.nth(0).fill("helix")
        await others.nth(0).press("Enter")
        await card.get_by_role("checkbox", name="kitty").check()
        await card.get_by_role("checkbox", name="kitty").press("Enter")
        await card.get_by_label("Comment on kitty").fill("fast")
        await card.get_by_label("Comment on kitty").press("Enter")
        await asyncio.sleep(SETTLE)
        assert not call.done(), "Enter in a one-line box or on a tick box must not send the answer"
        # Enter moved on: from the first "Other" to the next box of the form, never to a button.
        await others.nth(1).fill("wezterm")
        await expect(others.nth(1)).to_be_focused()
        await card.get_by_role("button", name="Submit — I'm done answering").click()
        result = (await asyncio.wait_for(call, 30)).structured_content
    assert result is not None
    first, second = result["answers"]
    assert first == {"question": editor, "selections": [], "other": "helix"}
    assert second["other"] == "wezterm"
    assert second["selections"] == [{"option": "kitty", "comment": "fast"}]


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_enter_in_the_next_box_goes_there(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, live_server_proc)
    title = f"Enter: why is CI slow ({width})?"
    ratings = {
        "title": title,
        "description": "Two guesses.",
        "hypotheses": ["Enter: the cache is cold", "Enter: the runner is small"],
    }
    async with live_server_proc.mcp("legacy", path="/mcp/askme") as client:
        call = asyncio.create_task(client.call_tool("challenge-hypothesis", ratings))
        card = await open_question(page, title)
        await expect(card).to_be_visible(timeout=10_000)
        first = card.get_by_label("Comment on: Enter: the cache is cold")
        await first.fill("likely")
        await first.press("Enter")
        await expect(card.get_by_label("Comment on: Enter: the runner is small")).to_be_focused()
        await card.get_by_label("Comment on: Enter: the runner is small").press("Enter")  # the last box: stays
        await asyncio.sleep(SETTLE)
        assert not call.done(), "Enter in a comment must not send the ratings"
        assert await card.evaluate(LAYOUT_PROBLEMS) == []
        await card.screenshot(path=str(ARTIFACTS / f"deliberate-hypothesis-{width}.png"))
        call.cancel()


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_enter_in_the_reason_to_deny_sends_no_decision(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, live_server_proc)
    marker = f"echo enter-in-why-not-{width}"
    request = asyncio.ensure_future(hook(live_server_proc, permission_request(tool_input={"command": marker})))
    card = await open_question(page, marker, "article.question.kind-approval")
    await expect(card).to_be_visible(timeout=10_000)
    reason = card.get_by_label("Why not, if you deny (the agent reads it)")
    await reason.fill("use the staging database")
    await reason.press("Enter")
    await asyncio.sleep(SETTLE)
    assert not request.done(), "Enter in the reason must not send a Deny"
    await expect(card.get_by_role("radio", name="Deny")).to_be_checked()  # typing a reason chose Deny
    assert await card.evaluate(LAYOUT_PROBLEMS) == []
    await card.get_by_role("button", name="Send decision").click()
    response = await asyncio.wait_for(request, 30)
    decision = response.json()["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "deny", "message": "use the staging database"}


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_dismiss_takes_two_clicks_and_says_what_the_agent_will_be_told(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, live_server_proc)
    needle = f"Dismiss: skip the test ({width})?"
    help_request = {"task": "Two-step dismiss", "reason": "A flaky test", "question": needle}
    async with live_server_proc.mcp("legacy", path="/mcp/clifford") as client:
        call = asyncio.create_task(client.call_tool("request_help", help_request))
        card = await open_question(page, needle)
        await expect(card).to_be_visible(timeout=10_000)
        send = card.get_by_role("button", name="Dismiss — let the agent proceed on its own")
        await expect(send).to_be_hidden()
        await card.get_by_text("Dismiss…", exact=True).click()
        await expect(card).to_contain_text("will be told that nobody will answer, and to proceed on its own judgement")
        await expect(send).to_be_visible()
        await asyncio.sleep(SETTLE)
        assert not call.done(), "the first click only says what the agent will be told"
        assert await card.evaluate(LAYOUT_PROBLEMS) == []
        assert await serious_violations(page) == []
        await card.screenshot(path=str(ARTIFACTS / f"deliberate-dismiss-{width}.png"))
        await send.click()
        result = (await asyncio.wait_for(call, 30)).structured_content
    assert result is not None
    assert result["status"] == "dismissed"


async def test_key_hints_show_only_where_there_is_a_keyboard(live_server_proc: LiveServer, browser: Browser) -> None:
    options = [{"value": "a", "label": "Alpha"}, {"value": "b", "label": "Beta"}]
    async with live_server_proc.mcp("legacy", path="/mcp/maxsim") as client:
        call = asyncio.create_task(client.call_tool("ask_question", {"question": "Hints: which?", "options": options}))
        desk = await browser.new_page(viewport={"width": 1440, "height": 900})
        phone = await browser.new_page(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
        for page in (desk, phone):
            await log_in(page, live_server_proc)
            await listed(page, "Hints: which?")
        desk_card = await open_question(desk, "Hints: which?")
        await expect(desk_card.locator(".send-bar .key-hint")).to_have_text(
            "1\u20139 choose · Enter on a choice sends · Ctrl+Enter sends"  # an en dash
        )
        await expect(desk_card.locator("kbd.key-hint").first).to_be_visible()
        phone_card = await open_question(phone, "Hints: which?")
        assert await phone_card.locator(".key-hint").count() >= 3  # there (and a saved reply's Alt+N), but not shown
        for hint in await phone_card.locator(".key-hint").all():
            await expect(hint).to_be_hidden()
        await expect(phone.get_by_role("button", name="Keyboard shortcuts")).to_be_hidden()
        await phone_card.screenshot(path=str(ARTIFACTS / "deliberate-touch-390.png"))
        call.cancel()


LONG_CODE = "```\n" + "docker run --rm -v $PWD:/src " + "--env SOME_LONG_VARIABLE=value " * 12 + "image:latest\n```"


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_no_question_makes_a_page_wider_than_its_screen(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    """Code in a question, a sub-question's legend or a hypothesis scrolls inside its block (issue 39: a
    fieldset's min-content width made a 390 px page 3,289 px wide)."""
    run, flags, slow = (f"Wide: run this ({width})?", f"Wide: which flags ({width})?", f"Wide: is it slow ({width})?")
    asks: list[tuple[str, str, dict[str, Any], str]] = [
        ("/mcp/maxsim", "ask_question", {"question": f"{run}\n\n{LONG_CODE}"}, run),
        (
            "/mcp/askme",
            "ask-multiple-choice",
            {"questions": [{"text": f"{flags}\n\n{LONG_CODE}", "options": ["--rm", "-it"]}]},
            flags,
        ),
        (
            "/mcp/askme",
            "challenge-hypothesis",
            {"title": slow, "description": LONG_CODE, "hypotheses": ["Wide: the image is big"]},
            slow,
        ),
    ]
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, live_server_proc)
    calls = []
    async with (
        live_server_proc.mcp("legacy", path="/mcp/maxsim") as maxsim,
        live_server_proc.mcp("legacy", path="/mcp/askme") as askme,
    ):
        for path, tool, arguments, _ in asks:
            calls.append(asyncio.create_task((maxsim if path == "/mcp/maxsim" else askme).call_tool(tool, arguments)))
        for _, tool, _, needle in asks:
            card = await open_question(page, needle)
            await expect(card).to_be_visible(timeout=10_000)
            assert await card.evaluate(LAYOUT_PROBLEMS) == [], tool
            code = card.locator("pre").first
            assert await code.evaluate("(pre) => pre.scrollWidth > pre.clientWidth"), f"{tool}: the code scrolls"
            await card.screenshot(path=str(ARTIFACTS / f"deliberate-wide-{tool}-{width}.png"))
        widths = await page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert widths[0] <= widths[1] == width, widths
        for call in calls:
            call.cancel()


async def test_a_write_approval_reads_as_a_write_at_both_widths(live_server_proc: LiveServer, browser: Browser) -> None:
    content = "name: CI\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    for width, height in VIEWPORTS:
        path = f"/home/dev/shop/.github/workflows/ci-{width}.yml"
        page = await browser.new_page(viewport={"width": width, "height": height})
        await log_in(page, live_server_proc)
        write = permission_request(tool_name="Write", tool_input={"file_path": path, "content": content})
        request = asyncio.ensure_future(hook(live_server_proc, write))
        card = await open_question(page, path, "article.question.kind-approval")
        await expect(card).to_be_visible(timeout=10_000)
        await expect(card.locator("p.writes")).to_have_text(
            f"Writes 5 lines to {path}: the whole file, replacing anything there now."
        )
        await expect(card.locator("pre.write")).to_contain_text("runs-on: ubuntu-latest")
        await expect(card.locator("pre.diff")).to_have_count(0)
        assert await card.evaluate(LAYOUT_PROBLEMS) == []
        await card.scroll_into_view_if_needed()
        await card.screenshot(path=str(ARTIFACTS / f"deliberate-write-{width}.png"))
        await card.get_by_role("radio", name="Deny").check()
        await card.get_by_role("button", name="Send decision").click()
        assert (await asyncio.wait_for(request, 30)).json()["hookSpecificOutput"]["decision"]["behavior"] == "deny"
        await page.close()


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_an_agent_that_stopped_waiting_has_no_countdown_beside_it(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, live_server_proc)
    needle = f"Countdown: still there ({width})?"
    async with live_server_proc.mcp("2026-07-28", path="/mcp/askme") as client:
        call = asyncio.create_task(client.call_tool("ask-one-question", {"question": needle}))
        card = await open_question(page, needle)
        await expect(card).to_be_visible(timeout=10_000)
        await expect(card.locator(".countdown")).to_contain_text("The agent gives up in")
        call.cancel()  # the agent stops waiting; leaving the client closes its connection
    await expect(card.locator(".agent-state")).to_contain_text("The agent stopped waiting", timeout=10_000)
    await expect(card.locator(".countdown")).to_be_hidden()
    assert await card.evaluate(LAYOUT_PROBLEMS) == []
    await card.screenshot(path=str(ARTIFACTS / f"deliberate-agent-left-{width}.png"))


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_tile_chosen_from_the_keyboard_is_never_left_under_the_send_bar(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    """A choice the person makes is in sight: a tile chosen with its number key while it sits behind the sticky
    Send bar is scrolled above it (issue 39)."""
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, live_server_proc)
    title = f"Tiles: what next ({width})?"
    arguments = {
        "title": title,
        # A description taller than the screen: the tiles start below it and the Send bar sticks to the bottom.
        "description": "\n\n".join(f"Step {n} of the release went as planned." for n in range(40)),
        "options": [{"id": f"t{n}", "title": f"Tile {n}", "description": "What it means."} for n in range(1, 9)],
    }
    async with live_server_proc.mcp("legacy", path="/mcp/askme") as client:
        call = asyncio.create_task(client.call_tool("choose-next", arguments))
        card = await open_question(page, title)
        await expect(card).to_be_visible(timeout=10_000)
        if width >= 1024:  # the open question's Send bar is the one that sticks (issue 55): open it from its row
            await page.locator(f'.triage-row[data-for="{await card.get_attribute("id")}"]').click()
            await expect(card).to_have_class(re.compile(r"\bopen\b"))
        await card.evaluate("(card) => { card.setAttribute('tabindex', '-1'); card.focus(); }")
        tile = card.locator(".tile", has_text="Tile 8")
        # Scroll until the last tile's top is just inside the screen's bottom edge, behind the Send bar.
        await tile.evaluate("(tile) => window.scrollBy(0, tile.getBoundingClientRect().top - (innerHeight - 30))")
        bar = await card.locator(".send-bar").bounding_box()
        before = await tile.bounding_box()
        assert bar is not None
        assert before is not None
        assert before["y"] >= bar["y"], "the test starts with the tile behind the Send bar"
        await page.keyboard.press("8")
        await expect(tile.get_by_role("radio")).to_be_checked()
        await expect(tile.get_by_role("radio")).to_be_focused()
        bar = await card.locator(".send-bar").bounding_box()
        radio = await tile.get_by_role("radio").bounding_box()
        assert bar is not None
        assert radio is not None
        assert bar["y"] + bar["height"] <= height + 0.5, "the Send bar is stuck to the bottom of the screen"
        assert radio["y"] + radio["height"] <= bar["y"], f"the chosen tile is above the Send bar: {radio} {bar}"
        await page.screenshot(path=str(ARTIFACTS / f"deliberate-tile-keyboard-{width}.png"))
        call.cancel()
