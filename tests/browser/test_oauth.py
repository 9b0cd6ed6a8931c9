"""Signing in the MCP way, end to end: the Python SDK's own OAuth client against daphne, a person in chromium.

The client discovers (401 → protected-resource metadata → authorization-server metadata), registers
itself (RFC 7591), sends the person's browser to the login and consent pages, exchanges the code with
its PKCE verifier, and calls tools as that person; a person answers on the dashboard; the refresh
token gets a new access token; a revoked token's next call is 401.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from playwright.async_api import Browser, Page, expect

from testing.browser import (
    LAYOUT_PROBLEMS,
    SMALL_OR_WIDE,
    VIEWPORTS,
    log_in,
    open_question,
    serious_violations,
    synced,
)
from testing.live import PASSWORD, LiveServer, free_port
from testing.ts_client import ts_clients

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


class Storage:
    """What a host keeps between runs: the client's registration and its tokens."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Person:
    """The person at the browser: logs in when asked, reads the consent page, allows; the callback is caught."""

    def __init__(self, page: Page, server: LiveServer, client_name: str = "Claude Code") -> None:
        self.page, self.server, self.client_name = page, server, client_name
        self.callback_url = f"http://127.0.0.1:{free_port()}/callback"
        self.arrived: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.consent_text = ""

    async def listen(self) -> None:
        async def caught(route: object) -> None:
            request_url = route.request.url  # type: ignore[attr-defined]
            if not self.arrived.done():
                self.arrived.set_result(request_url)
            await route.fulfill(body="Signed in: you can close this tab.")  # type: ignore[attr-defined]

        # The client's own listener on a loopback port: played by the browser's request interception.
        await self.page.route(re.compile(re.escape(self.callback_url) + r".*"), caught)

    async def sign_in(self, authorization_url: str) -> None:
        page = self.page
        await page.goto(authorization_url)
        await expect(page.get_by_role("heading", name="Log in")).to_be_visible(timeout=15_000)
        await page.get_by_label("Username").fill(self.server.username)
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Log in").click()
        await expect(page.get_by_role("heading", name=f"Allow {self.client_name}?")).to_be_visible(timeout=15_000)
        self.consent_text = await page.locator("section.consent").inner_text()
        assert await serious_violations(page) == []
        assert await page.evaluate(SMALL_OR_WIDE) == []
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / f"oauth-consent-{page.viewport_size['width']}.png"), full_page=True)  # type: ignore[index]
        await page.get_by_role("button", name="Allow").click()

    async def callback(self) -> AuthorizationCodeResult:
        url = await asyncio.wait_for(self.arrived, 30)
        query = parse_qs(urlsplit(url).query)
        assert "error" not in query, query
        # As a host's listener passes it on: with the issuer the server named (RFC 9207), which the SDK checks.
        return AuthorizationCodeResult(
            code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
        )


def metadata(person: Person) -> OAuthClientMetadata:
    return OAuthClientMetadata(
        client_name=person.client_name,
        redirect_uris=[person.callback_url],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )


@asynccontextmanager
async def signed_in(server: LiveServer, person: Person, storage: Storage) -> AsyncIterator[Client]:
    auth = OAuthClientProvider(
        server_url=f"{server.url}/mcp",
        client_metadata=metadata(person),
        storage=storage,
        redirect_handler=person.sign_in,
        callback_handler=person.callback,
    )
    http = httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=120))
    async with http, Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client:
        yield client


async def mcp_status(server: LiveServer, access_token: str) -> int:
    """One tools/list with a bare bearer token, as a host would send it: the HTTP status."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {
        "Authorization": f"Bearer {access_token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }
    async with httpx2.AsyncClient(timeout=60) as http:
        response = await http.post(f"{server.url}/mcp", json=body, headers=headers)
    return response.status_code


@pytest.mark.parametrize("width", [1440, 390])
async def test_the_python_sdk_signs_in_asks_as_the_person_refreshes_and_is_revoked(
    live_server_proc: LiveServer, browser: Browser, width: int
) -> None:
    server = live_server_proc
    context = await browser.new_context(viewport={"width": width, "height": 900 if width > 600 else 844})
    person = Person(await context.new_page(), server)
    await person.listen()
    storage = Storage()

    async with signed_in(server, person, storage) as client:
        assert "Claude Code" in person.consent_text
        assert f"as {server.username}" in person.consent_text
        text = f"Ship the signed-in build ({width})?"
        options = [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]
        call = asyncio.create_task(client.call_tool("ask_question", {"question": text, "options": options}))

        # The person answers on the dashboard, in the same browser (already logged in).
        dashboard = await context.new_page()
        await dashboard.goto(f"{server.url}/")
        await synced(dashboard)
        card = await open_question(dashboard, text)
        await expect(card).to_contain_text(f"{server.username}'s Claude Code", timeout=10_000)
        await card.get_by_role("radio", name="Yes").check()
        await card.get_by_role("button", name="Send answer").click()
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {"answer": "yes"}
    history = [q for q in await server.questions() if q["question"] == text]
    assert history[0]["answer"]["answeredBy"] == server.username

    assert storage.tokens is not None
    assert storage.client is not None
    assert storage.client.client_secret is None  # a public client, as hosts register
    first = storage.tokens
    assert first.refresh_token
    assert await mcp_status(server, first.access_token) == 200
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {first.access_token}"}, timeout=60) as http:
        # Bound to /mcp (RFC 8707): the JSON API takes Hook Bridge's own tokens only.
        assert (await http.get(f"{server.url}/api/questions")).status_code == 401

    # Refresh: a new access token, bound to the same resource; the old refresh token is spent.
    async with httpx2.AsyncClient(timeout=60) as http:
        refreshed = await http.post(
            f"{server.url}/oauth/token/",
            data={
                "grant_type": "refresh_token",
                "refresh_token": first.refresh_token,
                "client_id": storage.client.client_id,
                "resource": f"{server.url}/mcp",
            },
        )
        assert refreshed.status_code == 200, refreshed.text
        second = refreshed.json()
        assert second["access_token"] != first.access_token
        assert await mcp_status(server, second["access_token"]) == 200

        # Revocation (RFC 7009), as a host signing out does: the next call is 401.
        revoked = await http.post(
            f"{server.url}/oauth/revoke/",
            data={"token": second["access_token"], "client_id": storage.client.client_id},
        )
        assert revoked.status_code == 200
    assert await mcp_status(server, second["access_token"]) == 401
    await context.close()


async def test_disconnecting_on_the_connected_agents_page_refuses_the_next_call(
    live_server_proc: LiveServer, browser: Browser
) -> None:
    server = live_server_proc
    context = await browser.new_context(viewport={"width": 1440, "height": 900})
    person = Person(await context.new_page(), server, client_name="Cursor")
    await person.listen()
    storage = Storage()
    async with signed_in(server, person, storage) as client:
        await client.list_tools()
    assert storage.tokens is not None
    assert await mcp_status(server, storage.tokens.access_token) == 200

    page = await context.new_page()
    await page.goto(f"{server.url}/agents/")
    row = page.locator(".agent-list li", has_text=f"{server.username}'s Cursor")
    await expect(row).to_contain_text("signed in")
    await page.screenshot(path=str(ARTIFACTS / "connected-agents-1440.png"), full_page=True)
    await row.get_by_role("button", name=re.compile("Disconnect")).click()
    await expect(page.get_by_role("status")).to_contain_text("is disconnected")

    assert await mcp_status(server, storage.tokens.access_token) == 401
    await context.close()


async def test_the_typescript_sdk_signs_in_and_asks_as_the_person(
    live_server_proc: LiveServer, browser: Browser
) -> None:
    server = live_server_proc
    context = await browser.new_context(viewport={"width": 1440, "height": 900})
    person = Person(await context.new_page(), server, client_name="OpenCode")
    await person.listen()
    async with ts_clients() as ts:
        await ts.send(op="signin", client="a", url=f"{server.url}/mcp", redirectUrl=person.callback_url,
                      clientName="OpenCode")  # fmt: skip
        asked = await ts.wait_for(event="authorize", client="a", timeout=30)
        assert urlsplit(asked["url"]).path == "/oauth/authorize/"
        assert parse_qs(urlsplit(asked["url"]).query)["code_challenge_method"] == ["S256"]
        await person.sign_in(asked["url"])
        await ts.send(op="code", client="a", code=(await person.callback()).code)
        await ts.wait_for(event="connected", client="a", timeout=30)
        assert f"as {server.username}" in person.consent_text

        text = "Deploy the TypeScript-signed build?"
        options = [{"value": "ship", "label": "Ship it"}, {"value": "wait", "label": "Wait"}]
        await ts.call("a", "k1", "ask_question", {"question": text, "options": options})
        dashboard = await context.new_page()
        await dashboard.goto(f"{server.url}/")
        await synced(dashboard)
        card = await open_question(dashboard, text)
        await expect(card).to_contain_text(f"{server.username}'s OpenCode", timeout=10_000)
        await card.get_by_role("radio", name="Ship it").check()
        await card.get_by_role("button", name="Send answer").click()
        outcome = await ts.outcome("k1", timeout=30)
        assert outcome["event"] == "result", outcome
        assert outcome["result"]["structuredContent"] == {"answer": "ship"}

        await ts.send(op="tokens", client="a")
        tokens = await ts.wait_for(event="tokens", client="a")
    access_token = tokens["tokens"]["access_token"]
    assert await mcp_status(server, access_token) == 200
    async with httpx2.AsyncClient(timeout=60) as http:
        revoked = await http.post(
            f"{server.url}/oauth/revoke/", data={"token": access_token, "client_id": tokens["clientId"]}
        )
    assert revoked.status_code == 200
    assert await mcp_status(server, access_token) == 401
    await context.close()


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_client_document_that_cannot_be_fetched_names_both_ways_out_on_the_page(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    """Issue 55, point 13: the page said "Start again from the agent", which fails the same way."""
    server = live_server_proc
    page = await browser.new_page(viewport={"width": width, "height": height})
    await log_in(page, server)
    # A client named by its document's address, on a host nobody answers for (.invalid never resolves).
    document = "https://client.invalid/oauth/claude-code.json"
    query = urlencode(
        {
            "response_type": "code",
            "client_id": document,
            "redirect_uri": f"http://127.0.0.1:{free_port()}/callback",
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGKSh9kBPA",
            "code_challenge_method": "S256",
            "state": "s",
        }
    )
    response = await page.goto(f"{server.url}/oauth/authorize/?{query}")
    assert response is not None
    assert response.status == 400
    await expect(page.get_by_role("heading", name="This sign-in can't go on")).to_be_visible()
    await expect(page.get_by_role("alert")).to_contain_text("client.invalid")
    yours = page.get_by_role("heading", name="What you can do")
    admins = page.get_by_role("heading", name="What the server's admin can do")
    await expect(yours).to_be_visible()
    await expect(admins).to_be_visible()
    await expect(page.locator("section.consent")).to_contain_text("Connect the agent with a token instead")
    await expect(page.locator("section.consent")).to_contain_text("HOOKBRIDGE_OAUTH_CLIENT_DOCUMENTS=0")
    await expect(page.locator("section.consent")).not_to_contain_text("Start again from the agent that sent you")
    await expect(
        page.locator("section.consent").get_by_role("link", name="Open the Agents page to make a token")
    ).to_have_attribute("href", "/agents/")
    assert await page.evaluate(SMALL_OR_WIDE) == []
    assert await page.locator("section.consent").evaluate(LAYOUT_PROBLEMS) == []
    assert await serious_violations(page) == []
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"oauth-client-document-failed-{width}.png"), full_page=True)
