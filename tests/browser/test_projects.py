"""Issue 31 in Debian's chromium, at both widths: each person's dashboard holds their projects' work only,
a viewer's cards carry no answer form, another project's question page is a 404, and an answerer's click
answers the real SDK client that waits. Each page is saved as a screenshot (test-artifacts/)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator

import pytest
from mcp.types import CallToolResult
from playwright.async_api import Browser, Page, expect

from testing.browser import ARTIFACTS, SMALL_OR_WIDE, listed, open_question, serious_violations
from testing.live import PASSWORD, LiveServer, serving, text_of
from testing.ts_client import ts_clients

WORLD = """
import io, json
from django.contrib.auth.models import User
from django.core.management import call_command
out = io.StringIO()
for name in ("web", "ops"):
    call_command("project", "create", name, stdout=out)
for name, project, role in [("vic", "web", "viewer"), ("ann", "web", "answerer"), ("out", "ops", "answerer")]:
    User.objects.create_user(name, password="{password}")
    call_command("project", "member", project, name, "--role", role, stdout=out)
tokens = {}
for name in ("web", "ops"):
    made = io.StringIO()
    call_command("create_token", f"{name}-agent", "--project", name, stdout=made)
    tokens[f"{name}-agent"] = made.getvalue().strip().splitlines()[-1]
bots = [("all-bot", ["--all-projects"]), ("web-bot", ["--project", "web"]), ("ops-bot", ["--project", "ops"])]
for name, where in bots:
    made = io.StringIO()
    call_command("create_token", name, "--scope", "answer", *where, stdout=made)
    tokens[name] = made.getvalue().strip().splitlines()[-1]
print(json.dumps(tokens))
"""


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving(HOOKBRIDGE_NEW_USER_ROLE="none", HOOKBRIDGE_MAX_HOLD="120", HOOKBRIDGE_PROGRESS_INTERVAL="0.5")


@pytest.fixture(scope="module")
def world(server: LiveServer) -> dict[str, str]:
    made = server.manage("shell", "-v", "0", "-c", WORLD.replace("{password}", PASSWORD))
    tokens: dict[str, str] = json.loads(made.strip().splitlines()[-1])
    server.tokens.update(tokens)
    return tokens


async def log_in_as(page: Page, server: LiveServer, username: str) -> None:
    await page.goto(f"{server.url}/accounts/login/?next=/")
    await page.get_by_label("Username").fill(username)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Log in").click()
    await expect(page.get_by_role("heading", name="Waiting for an answer")).to_be_visible()
    await expect(page.locator("#connection")).to_have_text("live")
    await expect(page.locator("body[data-synced]")).to_have_count(1, timeout=30_000)


@contextlib.asynccontextmanager
async def asking(server: LiveServer) -> AsyncIterator[dict[str, asyncio.Task[CallToolResult]]]:
    """Each project's agent, a real MCP SDK client, waiting on a question of its own."""
    async with server.mcp("legacy", token_name="web-agent") as web, server.mcp("legacy", token_name="ops-agent") as ops:
        calls = {
            "web": asyncio.create_task(web.call_tool("ask_question", {"question": "Projects: deploy web?"})),
            "ops": asyncio.create_task(ops.call_tool("ask_question", {"question": "Projects: restart ops?"})),
        }
        await server.wait_for_question("Projects: deploy web?", token_name="all-bot")
        await server.wait_for_question("Projects: restart ops?", token_name="all-bot")
        yield calls
        for call in calls.values():
            call.cancel()
        await asyncio.gather(*calls.values(), return_exceptions=True)


async def check_layout(page: Page, name: str, width: int) -> None:
    assert await page.evaluate(SMALL_OR_WIDE) == [], name
    assert await serious_violations(page) == [], name
    await page.screenshot(path=str(ARTIFACTS / f"projects-{name}-{width}.png"), full_page=True)


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
async def test_each_person_sees_their_projects_as_their_role_allows(
    server: LiveServer, world: dict[str, str], browser: Browser, width: int, height: int
) -> None:
    async with asking(server):
        await look_as_each(server, browser, width, height)


async def look_as_each(server: LiveServer, browser: Browser, width: int, height: int) -> None:
    viewer = await browser.new_page(viewport={"width": width, "height": height})
    await log_in_as(viewer, server, "vic")
    web_card = await open_question(viewer, "Projects: deploy web?")
    await expect(web_card).to_be_visible()
    await expect(viewer.locator("article.question", has_text="Projects: restart ops?")).to_have_count(0)
    await expect(viewer.locator("#pending-count")).to_have_text("1")
    await expect(web_card.locator(".read-only")).to_have_text(
        "You look on in web: a viewer there, you cannot answer it."
    )
    await expect(web_card.get_by_role("button", name="Send")).to_have_count(0)
    await expect(web_card.get_by_role("button", name="I'm answering this")).to_be_hidden()
    await expect(web_card.locator("form")).to_have_count(0)
    await check_layout(viewer, "viewer-dashboard", width)

    outsider = await browser.new_page(viewport={"width": width, "height": height})
    await log_in_as(outsider, server, "out")
    await listed(outsider, "Projects: restart ops?")
    await expect(outsider.locator("article.question", has_text="Projects: deploy web?")).to_have_count(0)
    web_id = await web_card.get_attribute("data-question-id")
    response = await outsider.goto(f"{server.url}/questions/{web_id}/")
    assert response is not None
    assert response.status == 404
    await check_layout(outsider, "outsider-404", width)

    superuser = await browser.new_page(viewport={"width": width, "height": height})
    await log_in_as(superuser, server, server.username)
    for text in ("Projects: deploy web?", "Projects: restart ops?"):
        card = await open_question(superuser, text)
        await expect(card).to_be_visible()
        await expect(card.get_by_role("button", name="Send")).to_have_count(1)
    for page in (viewer, outsider, superuser):
        await page.close()


async def test_an_answerers_click_answers_the_waiting_agent_and_the_viewer_sees_it_go(
    server: LiveServer, world: dict[str, str], browser: Browser
) -> None:
    async with asking(server) as calls:
        await answer_as_ann(server, browser, calls)


async def answer_as_ann(server: LiveServer, browser: Browser, asking: dict[str, asyncio.Task[CallToolResult]]) -> None:
    viewer = await browser.new_page(viewport={"width": 390, "height": 844})
    await log_in_as(viewer, server, "vic")
    answerer = await browser.new_page(viewport={"width": 1440, "height": 900})
    await log_in_as(answerer, server, "ann")
    card = await open_question(answerer, "Projects: deploy web?")
    await card.locator("textarea").fill("Yes, after lunch")
    await card.get_by_role("button", name="Send").click()
    result = await asyncio.wait_for(asking["web"], 30)
    assert "Yes, after lunch" in text_of(result)
    await expect(viewer.locator("article.question", has_text="Projects: deploy web?")).to_have_count(0, timeout=10_000)
    await expect(viewer.locator("#pending-count")).to_have_text("0")
    assert not asking["ops"].done()  # nobody in web could answer ops
    await viewer.close()
    await answerer.close()


async def test_the_typescript_sdks_question_lands_in_its_tokens_project(
    server: LiveServer, world: dict[str, str]
) -> None:
    """A host on the TypeScript SDK with a token of project web: web's bot sees and answers it, ops' bot never."""
    text = "Projects: the TypeScript host asks in web?"
    async with ts_clients() as ts:
        await ts.connect("host", f"{server.url}/mcp", world["web-agent"])
        await ts.call("host", "ask", "ask_question", {"question": text}, timeout=30_000)
        question = await server.wait_for_question(text, token_name="web-bot")
        assert all(q["question"] != text for q in await server.questions(token_name="ops-bot"))
        refused = await server.answer_via_api(question["id"], "not yours", token_name="ops-bot")
        assert refused.status_code == 404
        answered = await server.answer_via_api(question["id"], "yes, in web", token_name="web-bot")
        assert answered.status_code == 200
        result = await ts.outcome("ask")
    assert result["event"] == "result", result
    assert result["result"]["structuredContent"] == {"answer": "yes, in web"}


async def test_a_role_taken_away_closes_the_page_s_socket_with_4205_and_the_page_reconnects_to_what_is_left(
    server: LiveServer, world: dict[str, str], browser: Browser
) -> None:
    """Issue 54: a change of who sees what closes with a code the protocol allows (never 1012, which daphne refuses
    with "Exception inside application"); the dashboard connects again by itself and shows what the person may
    see now, here nothing of web's."""
    page = await browser.new_page()
    closes: list[int] = []

    def note_close(code: int) -> None:
        closes.append(code)

    await page.expose_function("noteClose", note_close)
    await page.add_init_script(
        "document.addEventListener('htmx:wsClose', (e) => window.noteClose(e.detail.event.code));"
    )
    async with asking(server):
        await log_in_as(page, server, "ann")
        await expect(page.locator(".triage-row", has_text="Projects: deploy web?")).to_have_count(1)
        try:
            await asyncio.to_thread(server.manage, "project", "member", "web", "ann", "--remove")
            await expect(page.locator(".triage-row", has_text="Projects: deploy web?")).to_have_count(0, timeout=15_000)
            await expect(page.locator("#connection")).to_have_text("live", timeout=15_000)
        finally:
            await asyncio.to_thread(server.manage, "project", "member", "web", "ann", "--role", "answerer")
    assert closes[:1] == [4205], closes
    assert "Exception inside application" not in server.log()
    assert "invalid close code" not in server.log()
    await page.close()
