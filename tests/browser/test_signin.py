"""Signing in with the company's identity provider, as a person does it in chromium at both widths: the login
page's "Sign in with Acme" first, the provider's own pages (panva's oidc-provider, started by the test), the
dashboard after; the page for someone in no project and the page for a sign-in that went wrong. Each is checked
for layout and accessibility, and photographed into test-artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from testing import idp
from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, VIEWPORTS, serious_violations
from testing.live import LiveServer

pytestmark = pytest.mark.skipif(idp.missing() is not None, reason=str(idp.missing()))

PEOPLE: dict[str, dict[str, Any]] = {
    "alice": {"email": "alice@acme.example", "name": "Alice Liddell", "groups": ["shop-answerers"]},
    "bob": {"email": "bob@acme.example", "name": "Bob Marley", "groups": ["marketing", "everyone-at-acme"]},
}


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[LiveServer, idp.Provider]]:
    with idp.hookbridge_with(PEOPLE, HOOKBRIDGE_OIDC_ROLES="shop-answerers=shop:answerer") as both:
        yield both


async def looked_at(page: Page, name: str, width: int) -> None:
    assert await page.locator("main").evaluate(LAYOUT_PROBLEMS) == []
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert await serious_violations(page) == []
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)


async def through_the_provider(page: Page, login: str) -> None:
    await page.get_by_role("link", name="Sign in with Acme").click()
    await page.locator("input[name=login]").fill(login)  # the provider's dev login page: any password
    await page.locator("input[name=password]").fill("any password")
    await page.get_by_role("button", name="Sign-in").click()
    await page.get_by_role("button", name="Continue").click()  # its consent page


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_person_signs_in_with_the_provider_and_lands_on_the_dashboard(
    world: tuple[LiveServer, idp.Provider], browser: Browser, width: int, height: int
) -> None:
    server, _ = world
    context = await browser.new_context(viewport={"width": width, "height": height})
    page = await context.new_page()
    await page.goto(f"{server.url}/")
    button = page.get_by_role("link", name="Sign in with Acme")
    await expect(button).to_be_visible()
    # What they see first: the provider's button above the password form, inside the first screen.
    box, password = await button.bounding_box(), await page.get_by_label("Password").bounding_box()
    assert box is not None
    assert password is not None
    assert box["y"] < password["y"]
    assert box["y"] + box["height"] <= height
    await looked_at(page, "signin-sso", width)
    await through_the_provider(page, "alice")
    await expect(page.get_by_role("heading", name="Waiting for an answer")).to_be_visible()
    await expect(page.locator("meta[name=hookbridge-user]")).to_have_attribute("content", "alice@acme.example")
    await expect(page.locator("#connection")).to_have_text("live", timeout=30_000)
    await context.close()


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_someone_in_no_mapped_group_is_told_what_to_ask_for(
    world: tuple[LiveServer, idp.Provider], browser: Browser, width: int, height: int
) -> None:
    server, _ = world
    context = await browser.new_context(viewport={"width": width, "height": height})
    page = await context.new_page()
    await page.goto(f"{server.url}/accounts/login/")
    await through_the_provider(page, "bob")
    await expect(page.get_by_role("heading", name="You are signed in, but in no project")).to_be_visible()
    await expect(page.locator(".sso-groups li")).to_have_text(["marketing", "everyone-at-acme"])
    await expect(page.get_by_text("Ask your admin to add your group")).to_be_visible()
    await looked_at(page, "signin-no-project", width)
    await context.close()


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
async def test_a_stale_sign_in_says_to_start_again_with_a_way_back(
    world: tuple[LiveServer, idp.Provider], browser: Browser, width: int, height: int
) -> None:
    server, _ = world
    context = await browser.new_context(viewport={"width": width, "height": height})
    page = await context.new_page()
    await page.goto(f"{server.url}/sso/callback?code=old&state=from-another-tab")
    await expect(page.get_by_role("heading", name="This sign-in was already used")).to_be_visible()
    back = page.get_by_role("link", name="Back to the sign-in page")
    await expect(back).to_be_visible()
    await looked_at(page, "signin-failed", width)
    await back.click()
    await expect(page.get_by_role("link", name="Sign in with Acme")).to_be_visible()
    await context.close()
