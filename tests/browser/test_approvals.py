"""An approval as a person meets it, in Debian's chromium: the hook request blocks, the card arrives live, and a
click returns exactly what Claude Code reads. Each card is saved as a screenshot (test-artifacts/)."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from typing import Any

from playwright.async_api import Browser, Page, expect

from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, VIEWPORTS, log_in, open_question, serious_violations
from testing.claude_hooks import FIXTURES, hook, permission_request
from testing.live import LiveServer


async def card_for(page: Page, needle: str, width: int, name: str) -> Any:
    card = await open_question(page, needle, "article.question.kind-approval")
    await expect(card).to_be_visible(timeout=10_000)
    problems = await card.evaluate(LAYOUT_PROBLEMS)
    assert problems == [], f"{name} at {width} px: {problems}"
    # The screenshot scrolls the card into view itself, finding it again if a live update replaced it (a scroll
    # of its own once met the card detached mid-swap: CI, 2026-12-07).
    await card.screenshot(path=str(ARTIFACTS / f"approval-{name}-{width}.png"))
    return card


async def test_a_person_allows_edits_or_denies_from_the_card(live_server_proc: LiveServer, browser: Browser) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for width, height in VIEWPORTS:
        page = await browser.new_page(viewport={"width": width, "height": height})
        await log_in(page, live_server_proc)

        # Allow: the Bash command shown as code, the host's suggestions as buttons.
        marker = f"echo allow-{width}"
        request = asyncio.ensure_future(hook(live_server_proc, permission_request(tool_input={"command": marker})))
        card = await card_for(page, marker, width, "bash")
        await expect(card.locator("pre.command")).to_have_text(marker)
        await expect(
            card.get_by_role("radio", name="Allow, and switch to acceptEdits mode (this session)")
        ).to_be_visible()
        assert await serious_violations(page) == []
        await card.get_by_role("radio", name="Allow", exact=True).check()
        await asyncio.sleep(0.3)
        assert not request.done(), "choosing Allow must not send it"
        await card.get_by_role("button", name="Send decision").click()
        response = await asyncio.wait_for(request, 30)
        assert response.json() == {
            "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}
        }
        await expect(card).to_be_hidden(timeout=5_000)

        # Allow with changes: an Edit shown as a diff; the edited input is what runs.
        edit = {"file_path": "/home/dev/shop/app.py", "old_string": f"x = {width}\n", "new_string": "x = 2\n"}
        request = asyncio.ensure_future(hook(live_server_proc, permission_request(tool_name="Edit", tool_input=edit)))
        card = await card_for(page, "app.py", width, "edit")
        await expect(card.locator("pre.diff .removed", has_text=f"-x = {width}")).to_be_visible()
        await expect(card.locator("pre.diff .added", has_text="+x = 2")).to_be_visible()
        await card.get_by_role("radio", name="Allow with changes").check()
        changed = {**edit, "new_string": "x = 3\n"}
        await card.get_by_label("The input to run instead (JSON)").fill(json.dumps(changed))
        await card.screenshot(path=str(ARTIFACTS / f"approval-edit-open-{width}.png"))
        assert await card.evaluate(LAYOUT_PROBLEMS) == []
        await card.get_by_role("button", name="Send decision").click()
        response = await asyncio.wait_for(request, 30)
        assert response.json()["hookSpecificOutput"]["decision"] == {"behavior": "allow", "updatedInput": changed}

        # Deny, with a message the agent reads.
        marker = f"rm -rf build-{width}"
        request = asyncio.ensure_future(hook(live_server_proc, permission_request(tool_input={"command": marker})))
        card = await card_for(page, marker, width, "deny")
        # What cannot be undone is said in words, right under the command, and nothing overlaps it.
        await expect(card.locator("p.destructive")).to_have_text(
            "Cannot be undone: it runs rm -rf. Read the whole command before you allow it."
        )
        command, warning = card.locator("pre.command"), card.locator("p.destructive")
        command_box, warning_box = await command.bounding_box(), await warning.bounding_box()
        assert command_box is not None
        assert warning_box is not None
        assert warning_box["y"] >= command_box["y"] + command_box["height"] - 1
        assert warning_box["x"] + warning_box["width"] <= width
        await card.get_by_label("Why not, if you deny (the agent reads it)").fill("Run make clean instead")
        await card.get_by_role("radio", name="Deny").check()
        await card.get_by_role("button", name="Send decision").click()
        response = await asyncio.wait_for(request, 30)
        assert response.json()["hookSpecificOutput"]["decision"] == {
            "behavior": "deny",
            "message": "Run make clean instead",
        }
        await page.close()


async def test_the_card_leaves_the_page_when_the_host_stops_waiting(
    live_server_proc: LiveServer, browser: Browser
) -> None:
    page = await browser.new_page(viewport={"width": 1440, "height": 900})
    await log_in(page, live_server_proc)
    marker = "echo the-host-goes-away"
    request = asyncio.ensure_future(hook(live_server_proc, permission_request(tool_input={"command": marker})))
    card = await open_question(page, marker, "article.question.kind-approval")
    await expect(card).to_be_visible(timeout=10_000)
    request.cancel()  # the person answered at the terminal
    await expect(page.locator("p.resolution", has_text="decided at the terminal")).to_be_visible(timeout=1_000)
    await page.close()


async def test_a_hosts_session_page_shows_its_work_and_takes_a_message(
    live_server_proc: LiveServer, browser: Browser
) -> None:
    sid = str(uuid.uuid4())
    for event in ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"):
        body = json.loads((FIXTURES / f"{event}.json").read_text())
        body["session_id"] = sid
        assert (await hook(live_server_proc, body)).status_code == 200
    for width, height in VIEWPORTS:
        page = await browser.new_page(viewport={"width": width, "height": height})
        await log_in(page, live_server_proc)
        await page.goto(f"{live_server_proc.url}/sessions/{sid}/")
        await expect(page.locator("#connection")).to_have_text("live")
        activity = page.locator("#session-activity")
        await expect(activity.locator("li.activity-tool", has_text="48 ms")).to_be_visible()
        await expect(activity.locator("li.activity-prompt", has_text="make hi.txt")).to_be_visible()
        await expect(page.locator("svg.timeline rect.tool")).to_have_count(1)
        await page.get_by_label("Handed to the agent after its next tool use, or when it stops").fill(f"Hello {width}")
        await page.get_by_role("button", name="Send to the agent").click()
        await expect(page.locator("#session-messages li", has_text=f"Hello {width}")).to_contain_text(
            "waiting for the next hook"
        )
        assert await page.locator("main").evaluate(LAYOUT_PROBLEMS) == []
        assert await serious_violations(page) == []
        await page.screenshot(path=str(ARTIFACTS / f"session-claude-code-{width}.png"), full_page=True)
        await page.close()
    body = json.loads((FIXTURES / "PostToolUse.json").read_text())
    body["session_id"] = sid
    said = (await hook(live_server_proc, body)).json()["hookSpecificOutput"]["additionalContext"]
    assert said == "alice (on Hook Bridge) says: Hello 1440\n\nalice (on Hook Bridge) says: Hello 390"


TWO_PEOPLE = """
import json
from django.contrib.auth.models import User
from approvals.models import ApprovalPolicy
from projects.models import Project
from tokens.models import AgentToken, Scope
shop = Project.default()
bob = User.objects.create_user("bob")
shop.set_member(bob, "answerer")
ApprovalPolicy.objects.create(project=shop, name="pushes need two", command_prefix="git push", quorum=2)
print(json.dumps({"bob": AgentToken.issue("bob-answers", scope=Scope.ANSWER, project=shop, user=bob)[1]}))
"""


async def test_a_two_person_approval_shows_who_allowed_and_waits_for_the_second(browser: Browser) -> None:
    """Issue 53: the card says who must decide; after the first allow, "1 of 2: alice allowed at …", live on every
    page, and the host is answered only by the second person's allow."""
    import httpx2

    from testing.live import serving

    ARTIFACTS.mkdir(exist_ok=True)
    for server in serving():
        raw = json.loads(server.manage("shell", "-c", TWO_PEOPLE).strip().splitlines()[-1])
        for width, height in VIEWPORTS:
            marker = f"git push origin topic-{width}"
            request = asyncio.ensure_future(hook(server, permission_request(tool_input={"command": marker})))
            page = await browser.new_page(viewport={"width": width, "height": height})
            await log_in(page, server)
            card = await open_question(page, marker, "article.question.kind-approval")
            await expect(card.locator(".policy-needs")).to_have_text(
                "The policy 'pushes need two' needs 2 people to allow it."
            )
            await card.get_by_role("radio", name="Allow", exact=True).check()
            await card.get_by_role("button", name="Send decision").click()
            card = page.locator("article.question", has_text=marker)
            await expect(card.locator(".vote").first).to_contain_text("1 of 2: alice allowed at")
            await expect(card.locator(".vote-notice")).to_have_text(
                "Your allow is counted: 1 more must allow before the agent may go on."
            )
            assert await card.evaluate(LAYOUT_PROBLEMS) == []
            assert await serious_violations(page) == []
            await card.screenshot(path=str(ARTIFACTS / f"approval-one-of-two-{width}.png"))
            await asyncio.sleep(0.5)
            assert not request.done(), "one allow of two must not answer the host"
            # The live push of this very vote (its list of who allowed) may land after the response: it keeps both.
            await expect(card.locator(".vote-notice")).to_be_visible()
            await expect(card.locator(".vote")).to_have_count(1)
            question_id = await card.get_attribute("data-question-id")
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw['bob']}"}, timeout=60) as http:
                body = {"questionId": question_id, "answer": {"behavior": "allow"}}
                assert (await http.post(f"{server.url}/api/mcp-answer", json=body)).status_code == 200
            response = await asyncio.wait_for(request, 30)
            assert response.json()["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
            # Decided elsewhere: the card leaves, or (open beside the list) says it is closed.
            if width > 600:
                await expect(card).to_have_class(re.compile(r"\bclosed\b"), timeout=5_000)
            await expect(page.locator(".triage-row", has_text=marker)).to_have_count(0, timeout=5_000)
            await page.close()


async def test_allow_for_this_session_is_chosen_on_the_card_and_listed_on_the_session_page_with_a_revoke(
    browser: Browser,
) -> None:
    """Issue 53: the grant is a deliberate choice on the card; the session's page shows it with its time left."""
    from testing.live import serving

    ARTIFACTS.mkdir(exist_ok=True)
    for server in serving():
        for width, height in VIEWPORTS:
            marker = f"npm run build-{width}"
            body = permission_request(tool_input={"command": marker})
            request = asyncio.ensure_future(hook(server, body))
            page = await browser.new_page(viewport={"width": width, "height": height})
            await log_in(page, server)
            card = await card_for(page, marker, width, "grant")
            await card.get_by_role("radio", name="Allow for this session, 30 minutes").check()
            # The page has its answer's response before it is sent elsewhere: the waiting hook is let go before
            # the response is written, and a navigation begun meanwhile was aborted (CI, 2026-12-07: ERR_ABORTED).
            async with page.expect_response(lambda r: r.request.method == "POST" and "/answer" in r.url):
                await card.get_by_role("button", name="Send decision").click()
            response = await asyncio.wait_for(request, 30)
            assert response.json()["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
            again = {**permission_request(tool_input={"command": f"{marker} --prod"}), "session_id": body["session_id"]}
            assert (await hook(server, again)).json()["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
            await page.goto(f"{server.url}/sessions/{body['session_id']}/")
            grants = page.locator("#session-grants")
            await expect(grants).to_contain_text("allowed at once by alice")
            await expect(grants).to_contain_text("min left")
            assert await grants.evaluate(LAYOUT_PROBLEMS) == []
            assert await serious_violations(page) == []
            await grants.screenshot(path=str(ARTIFACTS / f"session-grants-{width}.png"))
            await grants.get_by_role("button", name=re.compile("Revoke the grant")).click()
            await expect(page.locator("#session-grants")).to_contain_text("None: each tool use")
            await page.close()


WHO_DECIDES = """
import json
from datetime import time
from django.contrib.auth.models import User
from approvals.models import ApprovalPolicy
from hosts import service
from projects.models import OnCallSchedule, OnCallTurn, Project
from tokens.models import AgentToken
shop = Project.default()
alice = User.objects.get(username="alice")
bob = User.objects.create_user("bob")
shop.set_member(bob, "answerer")
backend = OnCallSchedule.objects.create(project=shop, name="backend", handoff=time(9), time_zone="Europe/Berlin")
for i, person in enumerate([alice, bob]):
    OnCallTurn.objects.create(schedule=backend, user=person, position=i)
ApprovalPolicy.objects.create(project=shop, name="releases by the on-call", command_prefix="make release",
                              deciders=["on-call:backend"])
agent, _ = AgentToken.issue("lint-agent", project=shop)
for n in range(6):
    payload = {"tool_name": "Bash", "tool_input": {"command": "npm run lint", "description": f"lint {n}"},
               "cwd": "/home/alice/shop", "host": "claude-code"}
    question, _ = service.ask_approval(agent, "lint-agent", payload, None, "Bash: npm run lint")
    question.record_answer({"behavior": "allow"}, by_user=alice)
print(json.dumps({"on_call": backend.on_call().get_username()}))
"""


async def test_the_admin_suggests_a_rule_runs_a_dry_run_before_saving_and_a_card_names_the_on_call(
    browser: Browser,
) -> None:
    """Issue 53, as an admin meets it at both widths: the rules page suggests what alice keeps allowing; a new deny
    rule first shows the allows it would have denied and saves only when confirmed; the on-call schedule lists who
    is on call; an approval under a policy naming the on-call says who that is now."""
    from testing.live import serving

    ARTIFACTS.mkdir(exist_ok=True)
    for server in serving():
        world = json.loads(server.manage("shell", "-c", WHO_DECIDES).strip().splitlines()[-1])
        for width, height in VIEWPORTS:
            page = await browser.new_page(viewport={"width": width, "height": height})
            await log_in(page, server)

            await page.goto(f"{server.url}/admin/approvals/approvalrule/")
            suggested = page.locator("#suggested")
            await expect(suggested).to_contain_text(
                "alice allowed npm run lint in /home/alice/shop 6 times in 14 days and never denied it"
            )
            await expect(suggested.get_by_role("button", name="Make the rule")).to_be_visible()
            assert await suggested.evaluate(LAYOUT_PROBLEMS) == [], width
            assert await serious_violations(page) == [], width
            await page.screenshot(path=str(ARTIFACTS / f"admin-rule-suggestions-{width}.png"), full_page=True)

            await page.goto(f"{server.url}/admin/approvals/approvalrule/add/")
            await page.locator("#id_action").select_option("deny")
            await page.locator("#id_tool_pattern").fill("Bash")
            await page.locator("#id_command_prefix").fill("npm run")
            await page.locator("#id_message").fill("Lint in CI, not on laptops")
            await page.get_by_role("button", name="Save", exact=True).click()
            dry_run = page.locator("#dry-run")
            await expect(page.locator("#content")).to_contain_text("would decide 6 of them otherwise")
            await expect(dry_run.locator("tbody tr")).to_have_count(6)
            await expect(dry_run.locator("tbody tr").first).to_contain_text("deny by rule")
            assert await page.locator("#content").evaluate(LAYOUT_PROBLEMS) == [], width
            assert await serious_violations(page) == [], width
            await page.screenshot(path=str(ARTIFACTS / f"admin-dry-run-{width}.png"), full_page=True)
            await page.get_by_role("link", name="No, take me back").click()
            await expect(page.locator("#id_command_prefix")).to_have_value("npm run")

            await page.goto(f"{server.url}/admin/projects/oncallschedule/")
            await expect(page.locator("td.field-on_call_now")).to_have_text(world["on_call"])
            assert await serious_violations(page) == [], width
            await page.screenshot(path=str(ARTIFACTS / f"admin-on-call-{width}.png"), full_page=True)

            marker = f"make release v{width}"
            request = asyncio.ensure_future(hook(server, permission_request(tool_input={"command": marker})))
            await page.goto(f"{server.url}/")
            card = await card_for(page, marker, width, "on-call")
            await expect(card.locator(".policy-needs")).to_have_text(
                "The policy 'releases by the on-call' needs 1 person from the on-call of backend "
                f"({world['on_call']} now) to allow it."
            )
            await card.get_by_text("Decide alone (a project admin, break-glass)").click()
            await expect(card.get_by_label(re.compile("Why you decide alone past the policy"))).to_be_visible()
            assert await card.evaluate(LAYOUT_PROBLEMS) == [], width
            assert await serious_violations(page) == [], width
            await card.screenshot(path=str(ARTIFACTS / f"approval-break-glass-{width}.png"))
            await card.get_by_text("Decide alone (a project admin, break-glass)").click()
            await card.get_by_role("radio", name="Deny", exact=True).check()
            await card.get_by_role("button", name="Send decision").click()
            if world["on_call"] == "alice":
                response = await asyncio.wait_for(request, 30)
                assert response.json()["hookSpecificOutput"]["decision"]["behavior"] == "deny"
            else:
                await expect(card).to_contain_text("is not one of them")
                request.cancel()
            await page.close()

        # Saved only when confirmed, and then a rule: the suggestion is made no more.
        page = await browser.new_page()
        await log_in(page, server)
        await page.goto(f"{server.url}/admin/approvals/approvalrule/")
        await page.locator("#suggested").get_by_role("button", name="Make the rule").click()
        await expect(page.locator(".messagelist")).to_contain_text("Saved rule")
        await expect(page.locator("#suggested")).to_have_count(0)
        await page.close()
