"""The triage list (issue 42, part 1): everything waiting at a glance, one row per question.

Fourteen questions wait, from four agents (two over MCP, two Claude Code sessions asking approvals): in Debian's
chromium the rows fill the first screen at 1440x900 (beside the open question) and at 390x844 (a tap opens the
question full screen, Back returns); j/k move, o or Enter opens and never sends, Esc closes; a push keeps the
selection and what was typed, and a question answered elsewhere leaves the list with a notice.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, log_in, open_question, serious_violations
from testing.claude_hooks import hook, permission_request
from testing.live import LiveServer, serving


@pytest.fixture
def server() -> Iterator[LiveServer]:
    """A server per test: the counts below are of exactly the questions the test asks."""
    yield from serving()


@contextlib.asynccontextmanager
async def waiting(server: LiveServer, questions: int, approvals: int) -> AsyncIterator[list[str]]:
    """`questions` asked over MCP by agent-a and agent-b in turn and `approvals` from Claude Code sessions, all
    waiting until the block ends; yields the questions' texts then the approvals' commands, in asking order."""
    asked: list[str] = []
    tasks: list[asyncio.Future[Any]] = []
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(server.mcp("legacy", token)) for token in ("agent-a", "agent-b")]
        try:
            for n in range(questions):
                text = f"Row {n}: which database for the {n}th service?"
                tasks.append(asyncio.create_task(clients[n % 2].call_tool("ask_question", {"question": text})))
                await server.wait_for_question(text)
                asked.append(text)
            for n in range(approvals):
                command = f"make deploy-{n}-{uuid.uuid4().hex[:4]}"
                body = permission_request(tool_input={"command": command}, cwd=f"/home/dev/shop-{n % 2}")
                tasks.append(asyncio.ensure_future(hook(server, body)))
                await until_asked(server, command)
                asked.append(command)
            yield asked
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


async def until_asked(server: LiveServer, needle: str) -> None:
    deadline = time.monotonic() + 60
    while not any(needle in q["question"] for q in await server.questions(status="pending")):
        assert time.monotonic() < deadline, f"no approval of {needle!r} came"
        await asyncio.sleep(0.05)


async def rows_in_view(page: Page, height: int) -> int:
    boxes = [await row.bounding_box() for row in await page.locator(".triage-row").all()]
    return sum(1 for box in boxes if box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height)


async def test_fourteen_waiting_show_as_rows_on_the_first_screen_at_both_widths(
    server: LiveServer, browser: Browser
) -> None:
    async with waiting(server, questions=10, approvals=4) as asked:
        wide = await browser.new_page(viewport={"width": 1440, "height": 900})
        await log_in(wide, server)
        await expect(wide.locator(".triage-row")).to_have_count(14, timeout=10_000)
        assert await rows_in_view(wide, 900) >= 12
        await wide.screenshot(path=str(ARTIFACTS / "triage-list-first-1440.png"))
        # Approvals lead (their host gives up soonest), with the command first (issue 55), the tool, who asks,
        # the folder's last part and the real project, and the time left.
        first = wide.locator(".triage-row").first
        await expect(first.locator(".row-line").first.locator(".row-command")).to_have_text(
            re.compile(r"^make deploy-\d-[0-9a-f]{4}$")
        )
        await expect(first.locator(".row-kind")).to_have_text("Bash")
        await expect(first.locator(".row-where")).to_have_text(re.compile(r"^shop-[01] · default$"))
        await expect(first.locator(".row-left")).to_have_text(re.compile(r"^\d+ min left$"))
        await expect(wide.locator(".triage-row", has_text=asked[1])).to_contain_text("agent-b")
        # Two panes: the chosen row's question stands beside the list, its whole form on the first screen.
        selected = wide.locator('.triage-row[aria-current="true"]')
        await expect(selected).to_have_count(1)
        card = wide.locator(f"#{await selected.get_attribute('data-for')}")
        list_box, card_box = await wide.locator(".triage").bounding_box(), await card.bounding_box()
        assert list_box is not None
        assert card_box is not None
        assert card_box["x"] >= list_box["x"] + list_box["width"], "the open question is not beside the list"
        assert card_box["y"] < 900 - 200
        await expect(card.locator(".send-bar button.primary")).to_be_in_viewport()
        # A row opens its question beside the list: the card comes into view, chosen, and nothing is sent.
        await wide.locator(".triage-row", has_text=asked[7]).click()
        seventh = wide.locator("article.question", has_text=asked[7])
        await expect(seventh).to_have_class(re.compile(r"\bopen\b"))
        await expect(seventh.locator("form")).to_be_in_viewport()
        assert await wide.locator("main").evaluate(LAYOUT_PROBLEMS) == []
        assert await serious_violations(wide) == []
        await wide.screenshot(path=str(ARTIFACTS / "triage-list-1440.png"))

        phone = await browser.new_page(viewport={"width": 390, "height": 844})
        await log_in(phone, server)
        await expect(phone.locator(".triage-row")).to_have_count(14, timeout=10_000)
        assert await rows_in_view(phone, 844) >= 6
        await expect(phone.locator("#question-list > article.question:visible")).to_have_count(0)
        assert await phone.locator("main").evaluate(LAYOUT_PROBLEMS) == []
        assert await serious_violations(phone) == []
        await phone.screenshot(path=str(ARTIFACTS / "triage-list-390.png"))
        # A tap opens the question full screen: its whole form, and Back; the list and the page around step aside.
        card = await open_question(phone, asked[3])
        await expect(phone.locator(".triage")).to_be_hidden()
        await expect(phone.locator("#status-bar")).to_be_hidden()
        await expect(phone.locator("#question-list > article.question:visible")).to_have_count(1)
        back = phone.get_by_role("button", name="Back to all waiting questions")
        await expect(back).to_be_in_viewport()
        card_box, back_box = await card.bounding_box(), await back.bounding_box()
        assert card_box is not None
        assert back_box is not None
        assert back_box["y"] + back_box["height"] <= card_box["y"] < 220, "the question is not first under Back"
        await expect(card.locator("textarea")).to_be_in_viewport()
        await expect(card.locator(".send-bar button.primary")).to_be_in_viewport()
        assert await phone.locator("main").evaluate(LAYOUT_PROBLEMS) == []
        assert await serious_violations(phone) == []
        await phone.screenshot(path=str(ARTIFACTS / "triage-open-390.png"))
        await back.click()
        await expect(phone.locator(".triage")).to_be_visible()
        await expect(phone.locator(".triage-row", has_text=asked[3])).to_be_focused()
        # The system Back (issue 55, point 7): it closes an open question, and leaves the app only from the list.
        await open_question(phone, asked[5])
        await expect(phone.locator(".triage")).to_be_hidden()
        url = phone.url
        await phone.go_back()
        await expect(phone.locator(".triage")).to_be_visible()
        await expect(phone.locator("#question-list > article.question:visible")).to_have_count(0)
        assert phone.url == url, "Back left the dashboard"
        await open_question(phone, asked[6])
        await phone.get_by_role("button", name="Back to all waiting questions").click()
        await expect(phone.locator(".triage")).to_be_visible()
        assert await phone.evaluate("history.state && history.state.reading") is None, "the in-page Back took its step"
        pending = await server.questions(status="pending")
        assert len(pending) == 14, "opening or going back answered something"


async def test_keys_move_through_the_list_open_and_close_and_never_send(server: LiveServer, browser: Browser) -> None:
    async with waiting(server, questions=4, approvals=0) as asked:
        page = await browser.new_page(viewport={"width": 1440, "height": 900})
        await log_in(page, server)
        rows = page.locator(".triage-row")
        await expect(rows).to_have_count(4, timeout=10_000)
        await expect(rows.nth(0)).to_have_attribute("aria-current", "true")  # the first is chosen at first
        await page.keyboard.press("j")
        await page.keyboard.press("j")
        await page.keyboard.press("k")
        await expect(rows.nth(1)).to_be_focused()
        await expect(rows.nth(1)).to_have_attribute("aria-current", "true")
        await expect(rows.nth(0)).not_to_have_attribute("aria-current", "true")
        await page.keyboard.press("o")
        card = page.locator("article.question", has_text=asked[1])
        await expect(card).to_be_focused()
        await expect(card).to_have_class(re.compile(r"\bopen\b"))
        await page.keyboard.press("1")  # keys on the open question work on it: nothing sent yet
        await page.keyboard.press("Escape")
        await expect(rows.nth(1)).to_be_focused()
        await page.keyboard.press("j")
        await page.keyboard.press("Enter")
        await expect(page.locator("article.question", has_text=asked[2])).to_be_focused()
        await page.keyboard.press("Enter")  # on the card, not on a chosen answer: still nothing is sent
        await asyncio.sleep(0.5)
        assert len(await server.questions(status="pending")) == 4, "a key that opens sent an answer"

        phone = await browser.new_page(viewport={"width": 390, "height": 844})
        await log_in(phone, server)
        await expect(phone.locator(".triage-row")).to_have_count(4, timeout=10_000)
        await phone.keyboard.press("j")
        await phone.keyboard.press("o")
        await expect(phone.locator("article.question", has_text=asked[0])).to_be_visible()
        await expect(phone.locator(".triage")).to_be_hidden()
        await phone.keyboard.press("Escape")
        await expect(phone.locator(".triage-row", has_text=asked[0])).to_be_focused()
        await expect(phone.locator("#question-list > article.question:visible")).to_have_count(0)


async def test_a_push_keeps_the_open_question_and_its_draft_and_an_answer_elsewhere_is_said(
    server: LiveServer, browser: Browser
) -> None:
    async with waiting(server, questions=3, approvals=0) as asked:
        page = await browser.new_page(viewport={"width": 390, "height": 844})
        await log_in(page, server)
        await expect(page.locator(".triage-row")).to_have_count(3, timeout=10_000)
        card = await open_question(page, asked[2])
        draft = "Postgres, because the reports need window functions"
        await card.locator("textarea").fill(draft)
        # Pushed while it is open: an approval that leads the list, and an answer to another question elsewhere.
        async with waiting(server, questions=0, approvals=1) as (command,):
            await expect(page.locator(".triage-row")).to_have_count(4, timeout=10_000)
            other = next(q for q in await server.questions(status="pending") if q["question"] == asked[0])
            assert (await server.answer_via_api(other["id"], "MySQL")).status_code == 200
            await expect(page.locator("#toasts")).to_contain_text(f"“{asked[0]}” was answered by", timeout=10_000)
            await expect(page.locator(".triage-row", has_text=asked[0])).to_have_count(0)
            await expect(card).to_be_visible()
            await expect(card.locator("textarea")).to_have_value(draft)
            await page.get_by_role("button", name="Back to all waiting questions").click()
            rows = page.locator(".triage-row")
            await expect(rows).to_have_count(3)
            await expect(rows.first).to_contain_text(command)  # the approval leads
            await expect(page.locator(".triage-row", has_text=asked[2])).to_have_attribute("aria-current", "true")
            again = await open_question(page, asked[2])
            await expect(again.locator("textarea")).to_have_value(draft)


async def test_approvals_are_decided_in_a_batch_after_a_dialog_lists_what_each_runs(
    server: LiveServer, browser: Browser
) -> None:
    session = str(uuid.uuid4())
    commands = [f"rm -rf build-{n}-{uuid.uuid4().hex[:4]}" for n in range(3)]
    requests = [
        asyncio.ensure_future(hook(server, permission_request(session_id=session, tool_input={"command": command})))
        for command in commands
    ]
    elsewhere = f"make other-{uuid.uuid4().hex[:4]}"
    requests.append(asyncio.ensure_future(hook(server, permission_request(tool_input={"command": elsewhere}))))
    try:
        for command in [*commands, elsewhere]:
            await until_asked(server, command)
        for width, height in ((390, 844), (1440, 900)):
            page = await browser.new_page(viewport={"width": width, "height": height})
            await log_in(page, server)
            await expect(page.locator(".row-pick")).to_have_count(4, timeout=10_000)
            await expect(page.locator(".batch-bar")).to_be_hidden()
            row = page.locator("#triage-rows li", has_text=commands[0])
            await row.get_by_role("checkbox").check()
            await expect(page.locator(".batch-bar")).to_contain_text("1 approval chosen")
            await page.get_by_role("button", name="All from the same sessions").click()
            await expect(page.locator(".batch-bar")).to_contain_text("3 approvals chosen")
            assert not await page.locator("#triage-rows li", has_text=elsewhere).get_by_role("checkbox").is_checked()
            await page.get_by_role("button", name="Deny…").click()
            dialog = page.get_by_role("dialog", name="Deny these 3 approvals?")
            await expect(dialog).to_be_visible()
            for command in commands:  # what each runs, and that it cannot be undone, before anything is sent
                item = dialog.locator(".batch-list li", has_text=command)
                await expect(item.locator("code")).to_be_visible()
                await expect(item).to_contain_text("cannot be undone")
            assert await dialog.evaluate(LAYOUT_PROBLEMS) == []
            assert await serious_violations(page) == []
            await page.screenshot(path=str(ARTIFACTS / f"triage-batch-{width}.png"))
            if width == 390:  # Cancel sends nothing; the ticks stay
                await dialog.get_by_role("button", name="Cancel").click()
                await expect(dialog).to_be_hidden()
                await asyncio.sleep(0.3)
                assert not any(request.done() for request in requests)
                await page.close()
                continue
            await dialog.get_by_label("Why not (every agent reads it)").fill("Use make clean")
            await dialog.get_by_role("button", name="Deny all 3").click()
            await expect(dialog).to_be_hidden()
            await expect(page.locator("#toasts")).to_contain_text("Denied 3:", timeout=10_000)
            for request in requests[:3]:
                decision = (await asyncio.wait_for(request, 30)).json()["hookSpecificOutput"]["decision"]
                assert decision == {"behavior": "deny", "message": "Use make clean"}
            await expect(page.locator(".triage-row")).to_have_count(1, timeout=10_000)
            await expect(page.locator(".batch-bar")).to_be_hidden()
            assert not requests[3].done(), "an approval nobody chose was decided"
    finally:
        for request in requests:
            request.cancel()
        await asyncio.gather(*requests, return_exceptions=True)


async def test_allow_and_make_a_rule_shows_what_it_decides_before_it_is_saved(
    server: LiveServer, browser: Browser
) -> None:
    tag = uuid.uuid4().hex[:6]
    commands = [f"pytest-{tag} -q tests/a", f"pytest-{tag} -x", f"rm -rf {tag}"]
    requests = [
        asyncio.ensure_future(hook(server, permission_request(tool_input={"command": command}))) for command in commands
    ]
    try:
        for command in commands:
            await until_asked(server, command)
        for width, height in ((390, 844), (1440, 900)):
            page = await browser.new_page(viewport={"width": width, "height": height})
            await log_in(page, server)
            # A destructive command is proposed exactly, with the card's warning, never as a prefix (issue 53).
            await page.locator("#triage-rows li", has_text=commands[2]).get_by_role("checkbox").check()
            await page.get_by_role("button", name="Allow and make a rule…").click()
            risky = page.get_by_role("dialog", name="Allow and make a rule")
            await expect(risky.locator("p.destructive")).to_contain_text("Cannot be undone: it runs rm -rf.")
            await expect(risky.get_by_label("Commands starting with these words")).to_have_value("")
            await expect(risky.get_by_label("Or exactly this command")).to_have_value(f"rm -rf {tag}")
            assert await risky.evaluate(LAYOUT_PROBLEMS) == []
            assert await serious_violations(page) == []
            await page.screenshot(path=str(ARTIFACTS / f"triage-rule-destructive-{width}.png"))
            await risky.get_by_role("button", name="Cancel").click()
            await expect(risky).to_be_hidden()
            await page.locator("#triage-rows li", has_text=commands[2]).get_by_role("checkbox").uncheck()
            await page.locator("#triage-rows li", has_text=commands[0]).get_by_role("checkbox").check()
            await page.get_by_role("button", name="Allow and make a rule…").click()
            dialog = page.get_by_role("dialog", name="Allow and make a rule")
            await expect(dialog).to_be_visible()
            prefix = dialog.get_by_label("Commands starting with these words")
            await expect(prefix).to_have_value(f"pytest-{tag} -q")
            await expect(dialog.get_by_label("Stops deciding after (days)")).to_have_value("30")
            # Widened by hand, checked again: the list says which waiting approvals it would allow.
            await prefix.fill(f"pytest-{tag}")
            await dialog.get_by_role("button", name="Check what it decides").click()
            await expect(dialog).to_contain_text("It would allow now 2 waiting approvals")
            await expect(dialog.locator(".rule-decides")).not_to_contain_text(f"rm -rf {tag}")
            assert await dialog.evaluate(LAYOUT_PROBLEMS) == []
            assert await serious_violations(page) == []
            await page.screenshot(path=str(ARTIFACTS / f"triage-rule-{width}.png"))
            if width == 390:
                await dialog.get_by_role("button", name="Cancel").click()
                await expect(dialog).to_be_hidden()
                assert not any(request.done() for request in requests), "a proposal decided something"
                await page.close()
                continue
            await dialog.get_by_role("button", name="Save the rule and allow 2").click()
            dialog = page.get_by_role("dialog", name="Rule saved")
            await expect(dialog).to_contain_text("Allowed now: 2.")
            for request in requests[:2]:
                decision = (await asyncio.wait_for(request, 30)).json()["hookSpecificOutput"]["decision"]
                assert decision == {"behavior": "allow"}
            await dialog.get_by_role("button", name="Close").click()
            await expect(page.locator(".triage-row")).to_have_count(1, timeout=10_000)
            assert not requests[2].done()
            # The rule decides the next one with no card.
            later = await hook(server, permission_request(tool_input={"command": f"pytest-{tag} -k later"}))
            assert later.json()["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    finally:
        for request in requests:
            request.cancel()
        await asyncio.gather(*requests, return_exceptions=True)


async def test_a_batch_of_file_changes_is_listed_by_file_in_the_rows_the_dialog_and_the_toast(
    server: LiveServer, browser: Browser
) -> None:
    """Issue 55, point 4: an Edit was listed as "runs `May the agent run Edit: /home/alice/…?`"."""
    session = str(uuid.uuid4())
    path = f"/home/alice/api/src/models/order_{uuid.uuid4().hex[:4]}.py"
    edit = {"file_path": path, "old_string": "total = 0", "new_string": "total = Decimal(0)"}
    write = {"file_path": "/home/alice/api/NOTES.md", "content": "one\ntwo\nthree\n"}
    requests = [
        asyncio.ensure_future(hook(server, permission_request(session_id=session, tool_name=tool, tool_input=given)))
        for tool, given in (("Edit", edit), ("Write", write))
    ]
    try:
        await until_asked(server, path)
        await until_asked(server, "NOTES.md")
        for width, height in ((390, 844), (1440, 900)):
            page = await browser.new_page(viewport={"width": width, "height": height})
            await log_in(page, server)
            await expect(page.locator(".row-pick")).to_have_count(2, timeout=10_000)
            edit_row = page.locator(".triage-row", has_text=path)
            await expect(edit_row.locator(".row-does")).to_have_text(f"edits {path}")
            await expect(edit_row.locator(".row-kind")).to_have_text("Edit")
            await expect(page.locator(".triage-row .row-does", has_text="NOTES.md")).to_have_text(
                "writes 3 lines to /home/alice/api/NOTES.md"
            )
            await page.locator("#triage-rows li", has_text=path).get_by_role("checkbox").check()
            await page.get_by_role("button", name="All from the same sessions").click()
            await page.get_by_role("button", name="Allow…").click()
            dialog = page.get_by_role("dialog", name="Allow these 2 approvals?")
            edit_item = dialog.locator(".batch-list li", has_text=path)
            await expect(edit_item).to_contain_text(f"agent-a in Claude Code edits {path}")
            await expect(dialog.locator(".batch-list li", has_text="NOTES.md")).to_contain_text(
                "writes 3 lines to /home/alice/api/NOTES.md"
            )
            await expect(dialog).not_to_contain_text("May the agent run")
            # The change itself on demand: hidden until asked for, then the card's own diff.
            change = edit_item.locator("pre.diff")
            await expect(change).to_be_hidden()
            await edit_item.get_by_text("Show the change").click()
            await expect(change.locator(".removed", has_text="total = 0")).to_be_visible()
            await expect(change.locator(".added", has_text="total = Decimal(0)")).to_be_visible()
            written = dialog.locator(".batch-list li", has_text="NOTES.md")
            await written.get_by_text("Show what it writes").click()
            await expect(written.locator("pre.write")).to_contain_text("two")
            assert await dialog.evaluate(LAYOUT_PROBLEMS) == []
            assert await serious_violations(page) == []
            await page.screenshot(path=str(ARTIFACTS / f"triage-batch-files-{width}.png"))
            if width == 390:
                await dialog.get_by_role("button", name="Cancel").click()
                await page.close()
                continue
            await dialog.get_by_role("button", name="Allow all 2").click()
            toast = page.locator("#toasts")
            await expect(toast).to_contain_text(f"agent-a edits `{path}`", timeout=10_000)
            await expect(toast).to_contain_text("agent-a writes 3 lines to `/home/alice/api/NOTES.md`")
            for request in requests:
                decision = (await asyncio.wait_for(request, 30)).json()["hookSpecificOutput"]["decision"]
                assert decision["behavior"] == "allow"
    finally:
        for request in requests:
            request.cancel()
        await asyncio.gather(*requests, return_exceptions=True)
