"""The chat page in a real headless browser: Debian's Chromium driven by Playwright.

The operator types a message into the page and sees the reply, and an unprompted message
appears on its own. Without Chromium (or Playwright) the test skips, unless
PERSYN_REQUIRE_BROWSER=1 (CI sets it) makes that a failure.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from schemas.ids import new_ulid
from store.queries.runtime import add_outbox
from tests.harness import Stack, running_worker
from tests.webchannel.web import serving

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _browser_missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install playwright)"
    return None


@pytest.fixture
def chromium() -> str:
    missing = _browser_missing()
    if missing is not None:
        if os.environ.get("PERSYN_REQUIRE_BROWSER") == "1":
            pytest.fail(f"PERSYN_REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(missing)
    return CHROMIUM


async def test_an_operator_talks_to_an_agent_from_the_page(
    client: Client, stack: Stack, chromium: str, tmp_path: Path
) -> None:
    from playwright.async_api import async_playwright, expect

    rules = [ScriptRule(task="respond", reply="hello from the agent: {last}")]
    async with running_worker(client, stack, rules=rules) as worker:
        agent = await worker.create_agent(name="Ada")
        settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
        async with serving(settings, client) as web, async_playwright() as pw:
            browser = await pw.chromium.launch(
                executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
            )
            try:
                page = await browser.new_page()
                await page.goto(web.base_url + "/")
                await page.fill("#token", web.token)
                await page.fill("#agent", agent.handle)
                await page.fill("#channel", "browser")
                await page.click("#connect")
                await expect(page.locator("#text")).to_be_enabled(timeout=20_000)

                await page.fill("#text", "how are you?")
                await page.press("#text", "Enter")
                log = page.locator("#log")
                await expect(log).to_contain_text("you> how are you?")
                await expect(log).to_contain_text(
                    f"{agent.handle}> hello from the agent: how are you?", timeout=60_000
                )

                async with worker.db.session() as session:
                    await add_outbox(
                        session,
                        message_id=new_ulid(),
                        activation_id=new_ulid(),
                        agent=agent.handle,
                        channel_key=web.channel_key("browser"),
                        conversation_id=None,
                        text_="time for the stand-up",
                        created_at=datetime.now(UTC),
                        unprompted=True,
                    )
                await expect(log).to_contain_text(
                    f"{agent.handle} (unprompted)> time for the stand-up", timeout=20_000
                )
                # The reply is shown once, and the streamed draft gave way to it.
                assert await page.locator("#log p.agent").count() == 1
                assert await page.locator("#log p.live").count() == 0
            finally:
                await browser.close()
