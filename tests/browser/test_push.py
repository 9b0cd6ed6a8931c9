"""Issue 42: the phone — push turned on from the Notifications page, and a question arriving as a notification.

Debian's chromium against a real daphne and a push service the test starts (testing.fakes.FakePushService): the
subscription is posted as the page posts a browser's, the push service checks each push's VAPID signature and
decrypts it with the subscription's keys, and the decrypted payload is handed to the page's real service worker
through CDP's ServiceWorker.deliverPushMessage, which shows the notification; its Allow answers the waiting hook.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, CDPSession, Page, Worker, expect

from testing.browser import ARTIFACTS, LAYOUT_PROBLEMS, SMALL_OR_WIDE, log_in, serious_violations
from testing.claude_hooks import hook, permission_request
from testing.fakes import FakePushService, Pushed, fake_push_service
from testing.live import LiveServer

POST_SUBSCRIPTION = """async (subscription) => {
  const csrf = JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"];
  const response = await fetch("/push/subscriptions", {
    method: "POST", headers: {"Content-Type": "application/json", "X-CSRFToken": csrf},
    body: JSON.stringify(subscription),
  });
  return [response.status, await response.json()];
}"""
SHOWN = """async () => (await (await navigator.serviceWorker.ready).getNotifications()).map(
  (n) => ({title: n.title, body: n.body, tag: n.tag, actions: n.actions.map((a) => a.title)}))"""


@pytest.fixture(scope="module")
def pushing() -> Iterator[tuple[LiveServer, FakePushService]]:
    with fake_push_service() as service:
        server = LiveServer(env_overrides={"HOOKBRIDGE_PUSH_SERVICES": service.url, "HOOKBRIDGE_MAX_HOLD": "120"})
        server.setup()
        try:
            yield server, service
        finally:
            server.close()


async def notifications_page(
    browser: Browser, server: LiveServer, width: int, height: int
) -> tuple[BrowserContext, Page]:
    context = await browser.new_context(viewport={"width": width, "height": height})
    await context.grant_permissions(["notifications"], origin=server.url)
    page = await context.new_page()
    await log_in(page, server)
    if width < 1000:
        await page.get_by_role("link", name="Notifications").scroll_into_view_if_needed()
    await page.get_by_role("link", name="Notifications").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Notifications")
    return context, page


async def registration_id(cdp: CDPSession, scope: str) -> str:
    found: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def updated(event: dict[str, Any]) -> None:
        for registration in event["registrations"]:
            if registration["scopeURL"] == scope and not registration["isDeleted"] and not found.done():
                found.set_result(registration["registrationId"])

    cdp.on("ServiceWorker.workerRegistrationUpdated", updated)
    await cdp.send("ServiceWorker.enable")
    return await asyncio.wait_for(found, 30)


async def pushed_to(service: FakePushService, subscription: str, *, ended: bool, timeout: float = 15) -> Pushed:
    """The first push the service took for `subscription`: a question's, or (`ended`) its outcome's."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        for pushed in service.pushed:
            if pushed.subscription == subscription and bool(pushed.payload.get("ended")) == ended:
                return pushed
        assert asyncio.get_running_loop().time() < deadline, f"no push for {subscription}; refused: {service.refused}"
        await asyncio.sleep(0.05)


async def notifications_when(page: Page, holds: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
    """The notifications the service worker shows, once `holds` says they are as expected (10 s at most)."""
    shown: list[dict[str, Any]] = []
    for _ in range(200):
        shown = await page.evaluate(SHOWN)
        if holds(shown):
            return shown
        await asyncio.sleep(0.05)
    raise AssertionError(f"the notifications shown: {shown}")


async def service_worker(context: BrowserContext) -> Worker:
    if not context.service_workers:
        await context.wait_for_event("serviceworker", timeout=10_000)
    return context.service_workers[0]


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
async def test_the_notifications_page_turns_push_on_and_lists_the_browser_with_turn_off(
    pushing: tuple[LiveServer, FakePushService], browser: Browser, width: int, height: int
) -> None:
    server, service = pushing
    context, page = await notifications_page(browser, server, width, height)
    try:
        state = page.locator(".push-here .push-state")
        await expect(state).to_have_text("Off on this browser.")
        button = page.get_by_role("button", name="Notify me on this browser")
        await expect(button).to_be_visible()
        # This chromium has no push service of its own (no Google keys, no network): it says so, plainly, and
        # not as "permission denied" while notifications are allowed (issue 55, point 8).
        await button.click()
        await expect(state).to_contain_text(
            "Not turned on: notifications are allowed here, but this browser could not reach its own push service"
        )
        await expect(state).to_contain_text("Check the network")
        # A browser's subscription, posted as the page posts one (PushSubscription.toJSON()).
        status, kept = await page.evaluate(POST_SUBSCRIPTION, service.subscribe())
        assert (status, kept["service"]) == (201, service.url.removeprefix("http://"))
        refused_status, refused = await page.evaluate(
            POST_SUBSCRIPTION, {**service.subscribe(), "endpoint": "https://evil.example/push/1"}
        )
        assert (refused_status, refused["field"]) == (422, "endpoint")
        await page.reload()
        row = page.locator(".push-list li").first
        await expect(row).to_contain_text(f"through {service.url.removeprefix('http://')}")
        await expect(row).to_contain_text("nothing sent yet")
        turn_off = row.get_by_role("button", name="Turn off")
        await expect(turn_off).to_be_visible()
        assert await page.locator("main").evaluate(LAYOUT_PROBLEMS) == []
        assert await page.evaluate(SMALL_OR_WIDE) == []
        assert await serious_violations(page) == []
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / f"push-page-{width}.png"), full_page=True)
        before = await page.locator(".push-list li[data-endpoint]").count()
        await turn_off.click()
        await expect(page.locator("p.notice")).to_contain_text("Notifications are off on")
        await expect(page.locator(".push-list li[data-endpoint]")).to_have_count(before - 1)
    finally:
        await context.close()


async def test_an_approval_arrives_as_a_notification_whose_allow_answers_the_hook(
    pushing: tuple[LiveServer, FakePushService], browser: Browser
) -> None:
    server, service = pushing
    context, page = await notifications_page(browser, server, 390, 844)
    try:
        worker = await service_worker(context)
        cdp = await context.new_cdp_session(page)
        registration = await registration_id(cdp, f"{server.url}/")
        subscription = service.subscribe()
        name = subscription["endpoint"].rsplit("/", 1)[-1]
        assert (await page.evaluate(POST_SUBSCRIPTION, subscription))[0] == 201

        command = "npm run deploy -- --prod"
        decided = asyncio.ensure_future(hook(server, permission_request(tool_input={"command": command})))
        payload = (await pushed_to(service, name, ended=False)).payload
        assert command in payload["body"]
        assert [action["title"] for action in payload["actions"]] == ["Allow", "Deny"]

        # The push service hands the browser what it was sent: the service worker shows it.
        await cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": server.url, "registrationId": registration, "data": json.dumps(payload)},
        )
        (shown,) = await notifications_when(page, lambda shown: len(shown) == 1)
        assert shown["tag"] == payload["tag"]
        assert shown["actions"] == ["Allow", "Deny"]
        assert command in shown["body"]
        assert not decided.done(), "nothing is answered by showing it"

        # The person presses Allow: the service worker's own handler posts the notification's token.
        await worker.evaluate(
            """async () => {
              const [notification] = await self.registration.getNotifications();
              try {
                self.dispatchEvent(new NotificationEvent("notificationclick", {notification, action: "allow"}));
              } catch (error) { /* a synthetic event's waitUntil throws; the handler has started its work */ }
            }"""
        )
        response = await asyncio.wait_for(decided, 30)
        decision = response.json()["hookSpecificOutput"]["decision"]
        assert decision == {"behavior": "allow"}
        said = [{"title": shown["title"], "body": "Allowed.", "tag": payload["tag"], "actions": []}]
        assert await notifications_when(page, lambda now: now == said) == said

        # Decided, its notification is replaced by the outcome, under the same tag.
        ended = await pushed_to(service, name, ended=True)
        assert ended.payload["tag"] == payload["tag"]
        assert ended.payload["body"].startswith(f"Answered by {server.username}")
        await cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": server.url, "registrationId": registration, "data": json.dumps(ended.payload)},
        )
        outcome = [
            {"title": ended.payload["title"], "body": ended.payload["body"], "tag": payload["tag"], "actions": []}
        ]
        assert await notifications_when(page, lambda now: now == outcome) == outcome
    finally:
        await context.close()
