"""The README's picture of the dashboard, taken from a real server and Debian's chromium:

    python -m testing.readme_picture            # writes docs/img/dashboard.png (1440x900)

Two agents ask (one a choice, one a free-text question) and report where they are, as they would; the
picture is what a person who has just logged in sees.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

from playwright.async_api import async_playwright

from testing.browser import log_in
from testing.live import ROOT, LiveServer

OUT = ROOT / "docs" / "img" / "dashboard.png"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

logger = logging.getLogger(__name__)


async def take(server: LiveServer, out: Path) -> None:
    async with server.mcp("legacy") as first, server.mcp("legacy", token_name="agent-b") as second:
        await first.call_tool(
            "submit_lifecycle_event", {"event_type": "phase-started", "phase_name": "Migrate the billing tables"}
        )
        await second.call_tool("submit_lifecycle_event", {"event_type": "task-started", "phase_name": "Fix CI"})
        asks = [
            asyncio.create_task(
                first.call_tool(
                    "ask_question",
                    {
                        "question": "The `invoices` table has 2.1M rows. Migrate it **online** (slower, no "
                        "downtime) or in a **maintenance window** tonight?",
                        "options": [
                            {"value": "online", "label": "Online migration", "description": "About 40 minutes"},
                            {"value": "window", "label": "Maintenance window", "description": "Tonight, 10 minutes"},
                            {"value": "monday", "label": "Wait until Monday"},
                        ],
                    },
                )
            ),
            asyncio.create_task(
                second.call_tool(
                    "ask_question",
                    {"question": "Two CI jobs write to /tmp/x and race. May I give each job its own temp dir?"},
                )
            ),
        ]
        await asyncio.sleep(1)
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = await browser.new_page(viewport={"width": 1440, "height": 900})
            await log_in(page, server)
            await page.wait_for_timeout(500)
            await page.screenshot(path=str(out))
            await browser.close()
        for ask in asks:
            ask.cancel()
        await asyncio.gather(*asks, return_exceptions=True)


def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    server = LiveServer(env_overrides={"HOOKBRIDGE_MAX_HOLD": "120"})
    server.setup()
    try:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        asyncio.run(take(server, OUT))
    finally:
        server.close()
    logger.info("wrote %s", OUT)


if __name__ == "__main__":
    main()
