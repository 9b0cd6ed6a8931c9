"""Passkeys in chromium at both widths, with Chrome's own virtual authenticator (DevTools' WebAuthn domain) standing
in for a fingerprint reader: a person adds one on their Passkeys page, signs out, and signs in with it alone."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect

from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, VIEWPORTS, serious_violations
from testing.live import PASSWORD, LiveServer


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_person_adds_a_passkey_and_signs_in_with_it_instead_of_a_password(
    live_server_proc: LiveServer, browser: Browser, width: int, height: int
) -> None:
    server = live_server_proc
    # WebAuthn wants a domain as its relying party, never an IP address: the same server, as localhost.
    origin = f"http://localhost:{server.port}"
    context = await browser.new_context(viewport={"width": width, "height": height})
    page = await context.new_page()
    devtools = await context.new_cdp_session(page)
    await devtools.send("WebAuthn.enable")
    await devtools.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )
    await page.goto(f"{origin}/accounts/login/")
    await page.get_by_label("Username").fill(server.username)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Log in").click()
    await expect(page.get_by_role("heading", name="Waiting for an answer")).to_be_visible()

    await page.goto(f"{origin}/notifications/")
    await page.get_by_role("link", name="add a passkey").click()
    await page.get_by_label("Name it").fill(f"laptop at {width}")
    await page.get_by_role("button", name="Add a passkey").click()
    await expect(page.locator(".passkey-list")).to_contain_text(f"laptop at {width}")
    assert await page.locator("main").evaluate(LAYOUT_PROBLEMS) == []
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert await serious_violations(page) == []
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"passkeys-{width}.png"), full_page=True)

    await page.get_by_role("button", name="Log out").click()
    await expect(page.get_by_role("button", name="Sign in with a passkey")).to_be_visible()
    await page.screenshot(path=str(ARTIFACTS / f"signin-passkey-{width}.png"), full_page=True)
    await page.get_by_role("button", name="Sign in with a passkey").click()
    await expect(page.get_by_role("heading", name="Waiting for an answer")).to_be_visible()
    await expect(page.locator("meta[name=hookbridge-user]")).to_have_attribute("content", server.username)
    await context.close()
