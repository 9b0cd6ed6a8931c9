"""An XSS corpus in every field an agent fills, rendered in Chromium on every page that shows it (issue 17).

Every payload carries the marker "pwn". Nothing may run (no dialog, no request carrying the
marker), no element may get an event handler, an htmx or WebSocket attribute, or a
javascript:/data: URL from it, and no page may load anything from another host.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import Browser, Dialog, Page, expect

from testing.browser import ARTIFACTS, log_in
from testing.live import LiveServer

REMOTE = "remote-pwn.example"
CORPUS = [
    "<script>alert('pwn1')</script>",
    "<img src=x onerror=alert('pwn2')>",
    "<svg onload=alert('pwn3')>",
    "<iframe src=javascript:alert('pwn4')>",
    "<a href=javascript:alert('pwn5')>x</a>",
    "[pwn6](javascript:alert(6))",
    "[pwn7](JaVaScRiPt:alert(7))",
    "[pwn8](data:text/html;base64,PHNjcmlwdD5hbGVydCgncHduOCcpPC9zY3JpcHQ+)",
    "![pwn9](javascript:alert(9))",
    f"![pwn10](https://{REMOTE}/pwn10.png)",
    f"<img src=https://{REMOTE}/pwn11.png>",
    "<div hx-get='/pwn12' hx-trigger='load'>x</div>",
    "<button hx-post='/pwn13' hx-trigger='load'>x</button>",
    "<div hx-on:htmx:load='alert(\"pwn14\")'>x</div>",
    "<div hx-on::load='alert(\"pwn15\")'>x</div>",
    "<div data-hx-get='/pwn16' data-hx-trigger='load'>x</div>",
    "<div hx-vals='js:{a: alert(\"pwn17\")}' hx-get='/pwn17' hx-trigger='load'>x</div>",
    f"<div hx-ext='ws' ws-connect='wss://{REMOTE}/pwn18'>x</div>",
    "<div hx-get='/pwn19' hx-trigger='load' hx-swap='outerHTML' hx-target='body'>x</div>",
    "<form action='/pwn20'><button formaction='javascript:alert(20)'>pwn20</button></form>",
    "\"><script>alert('pwn21')</script>",
    "' onmouseover='alert(\"pwn22\")' x='",
    "\" autofocus onfocus=\"alert('pwn23')",
    "</textarea><script>alert('pwn24')</script>",
    "</title><script>alert('pwn25')</script>",
    "<style>@import 'https://remote-pwn.example/pwn26.css';</style>",
    "<link rel=stylesheet href=https://remote-pwn.example/pwn27.css>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert('pwn28')>",
    "<details open ontoggle=alert('pwn29')>",
    "<object data=javascript:alert('pwn30')>",
    "<base href='https://remote-pwn.example/pwn31/'>",
    "<meta http-equiv=refresh content='0;url=javascript:alert(32)'>pwn32",
    "{{ 7*7 }} {% debug %} pwn33",
    "javascript:alert('pwn34')",
]

# Anything agent text could have turned into markup that runs, fetches or talks back.
HOSTILE_DOM = """
() => {
  const found = [];
  for (const el of document.querySelectorAll("*")) {
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase(), value = attr.value.toLowerCase();
      const active = name.startsWith("on") || name.startsWith("hx-") || name.startsWith("data-hx-")
        || name.startsWith("ws-") || name.startsWith("sse-");
      // The page's own CSRF header is a random token: one that happens to hold "pwn" is not a payload (CI, once).
      const ownCsrf = el.tagName === "BODY" && name === "hx-headers"
        && /^\\{"X-CSRFToken": "[A-Za-z0-9]+"\\}$/.test(attr.value);
      if (active && !ownCsrf && value.includes("pwn")) found.push(`${el.tagName} ${name}=${attr.value}`);
      if (active && name.startsWith("on")) found.push(`${el.tagName} ${name}`);
      if (["href", "src", "action", "formaction", "data", "xlink:href"].includes(name)
          && /^\\s*(javascript|data|vbscript):/.test(value)
          && value !== "data:,"  /* the page's own empty favicon */) found.push(`${el.tagName} ${name}=${attr.value}`);
    }
    if (["SCRIPT", "IFRAME", "OBJECT", "EMBED", "BASE", "META", "LINK", "STYLE"].includes(el.tagName)
        && el.outerHTML.toLowerCase().includes("pwn")) found.push(el.outerHTML.slice(0, 80));
  }
  return found;
}
"""


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    live = LiveServer(env_overrides={"HOOKBRIDGE_MAX_HOLD": "120"})
    live.setup()
    try:
        yield live
    finally:
        live.close()


def calls() -> list[tuple[str, str, dict[str, Any]]]:
    """Every agent-written field of every kind, each holding payloads (labels hold one each)."""
    text = "\n\n".join(CORPUS)
    label = [p[:200] for p in CORPUS]
    return [
        ("/mcp", "ask_question", {
            "question": "XSS question " + text,
            "options": [{"value": f"v{i}{p}"[:200], "label": p, "description": p} for i, p in enumerate(label[:20])],
        }),
        ("/mcp", "ask_question", {
            "question": "XSS more options",
            "options": [{"value": f"v{i}{p}"[:200], "label": p} for i, p in enumerate(label[20:])],
        }),
        ("/mcp/askme", "ask-one-question", {"question": "XSS one " + text}),
        ("/mcp/askme", "ask-multiple-choice", {"questions": [
            {"text": "XSS multi " + p, "options": [p, "safe " + p[:100]]} for p in label[:10]
        ]}),
        ("/mcp/askme", "challenge-hypothesis", {
            "title": "XSS hypothesis " + label[0][:150], "description": text, "hypotheses": label[:12],
        }),
        ("/mcp/askme", "choose-next", {
            "title": "XSS next " + label[1][:150], "description": text,
            "options": [{"id": f"o{i}", "title": p[:200], "description": p} for i, p in enumerate(label[:8])],
        }),
        ("/mcp/clifford", "request_help", {"task": "XSS task " + text, "reason": text, "question": "XSS help " + text}),
    ]  # fmt: skip


async def check(page: Page, where: str, dialogs: list[str], requests: list[str]) -> None:
    await page.wait_for_timeout(300)  # an hx-trigger=load or onerror would have fired by now
    assert await page.evaluate(HOSTILE_DOM) == [], where
    assert dialogs == [], where
    assert [url for url in requests if "pwn" in url.lower() or REMOTE in url] == [], where


async def test_no_payload_in_any_field_runs_or_fetches_on_any_page(server: LiveServer, browser: Browser) -> None:
    guid = await server.open_session(name="XSS " + CORPUS[0], project="XSS " + CORPUS[11][:150])
    page = await browser.new_page()
    dialogs: list[str] = []
    requests: list[str] = []

    async def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        await dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("request", lambda request: requests.append(request.url))
    await log_in(page, server)
    await page.wait_for_selector("#question-list", state="attached")
    async with (
        server.mcp("legacy", path="/mcp/maxsim+progress") as maxsim,
        server.mcp("legacy", path="/mcp/askme") as askme,
        server.mcp("legacy", path="/mcp/clifford") as clifford,
    ):
        clients = {"/mcp": maxsim, "/mcp/askme": askme, "/mcp/clifford": clifford}
        for tool, arguments in [
            ("submit_lifecycle_event", {"event_type": "phase-started", "phase_name": CORPUS[1], "phase_number": "pwn"}),
            ("send_status", {"guid": guid, "message": "XSS status " + CORPUS[13]}),
            ("send_response", {"guid": guid, "content": "XSS response " + "\n\n".join(CORPUS)}),
        ]:
            result = await maxsim.call_tool(tool, arguments)
            assert not result.is_error, result
        asked = [asyncio.create_task(clients[path].call_tool(tool, arguments)) for path, tool, arguments in calls()]
        try:
            # Pushed live onto the open dashboard: every card arrives without a reload.
            await expect(page.locator("article.question")).to_have_count(len(asked), timeout=20_000)
            await check(page, "dashboard, pushed live", dialogs, requests)
            await page.reload()
            await check(page, "dashboard", dialogs, requests)
            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / "xss-dashboard.png"), full_page=True)
            pending = [q for q in await server.questions(status="pending") if "XSS" in str(q)]
            assert len(pending) == len(asked)
            for question in pending:
                await page.goto(f"{server.url}/questions/{question['id']}/")
                await check(page, f"question page {question['kind']}", dialogs, requests)
        finally:
            async with server.login() as http:
                for question in await server.questions(status="pending"):
                    await http.post(f"/questions/{question['id']}/dismiss")
            await asyncio.wait_for(asyncio.gather(*asked, return_exceptions=True), 20)
    for path in ["/history/", "/sessions/", f"/sessions/{guid}/", "/admin/questions/question/"]:
        await page.goto(f"{server.url}{path}")
        await check(page, path, dialogs, requests)
    await page.screenshot(path=str(ARTIFACTS / "xss-admin.png"), full_page=True)
    other_hosts = [url for url in requests if not url.startswith((server.url, "data:"))]
    assert other_hosts == []
    await page.close()
