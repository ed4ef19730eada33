"""axe-core (vendored under tests/vendor/axe-core, a test tool never served) in every state of every page of the web
client, in each theme of the settings menu: no critical and no serious violation anywhere, and a main heading on each
page."""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from pathlib import Path

import pytest
from browser_helpers import create_race, first_visit, http_url, launched_browser
from playwright.async_api import Page, ViewportSize, expect
from race_helpers import player

from server.app import RaceServer
from shared.protocol import RaceResult, Started

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
"""The vendored file's hash (tests/vendor/axe-core/README.md): a changed engine is a deliberate update."""
DESKTOP = ViewportSize(width=1280, height=800)
BLOCKING = ("critical", "serious")
THEMES = ("felt", "light", "dark", "contrast")
"""The settings menu's themes (js/settings.js): each page state is checked in every one."""


def axe_source() -> str:
    """The vendored axe-core, checked against its recorded hash."""
    data = AXE.read_bytes()
    assert hashlib.sha256(data).hexdigest() == AXE_SHA256, "tests/vendor/axe-core/axe.min.js is not the recorded version"
    return data.decode()


async def violations(page: Page, state: str) -> list[str]:
    """axe's critical and serious violations of the page as it is now, one line each (rule, impact, where)."""
    if not await page.evaluate("() => typeof window.axe === 'object'"):
        await page.add_script_tag(content=axe_source())
    found = await page.evaluate(
        """async () => (await axe.run(document, { resultTypes: ["violations"] })).violations
            .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3), count: v.nodes.length }))"""
    )
    return [f"{state}: {v['id']} ({v['impact']}, {v['count']} elements, e.g. {json.dumps(v['nodes'])})" for v in found if v["impact"] in BLOCKING]


async def has_main_heading(page: Page) -> bool:
    """Whether the page has exactly one visible h1."""
    return bool(await page.evaluate("() => [...document.querySelectorAll('h1')].filter((n) => n.offsetParent !== null).length === 1"))


@pytest.mark.timeout(480)  # every state in four themes: four axe runs each
async def test_every_page_state_has_no_critical_or_serious_accessibility_violation_and_one_main_heading(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    found: list[str] = []
    headless: list[str] = []

    async def check(page: Page, state: str) -> None:
        for theme in THEMES:  # the page as the settings menu draws it in that theme (set as the menu sets it)
            await page.evaluate("(theme) => { document.documentElement.dataset.theme = theme; }", theme)
            found.extend(await violations(page, f"{state} [{theme}]"))
        await page.evaluate("() => { document.documentElement.dataset.theme = 'felt'; }")
        if not await has_main_heading(page):
            headless.append(state)

    async with launched_browser() as browser:
        # bypass_csp: axe is added as a script of the test's, which the page's CSP ('self' only) would refuse.
        context = await browser.new_context(viewport=DESKTOP, bypass_csp=True)
        page = await context.new_page()
        page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        await page.goto(site + "/")
        await expect(page.locator("form.name-form")).to_be_visible()
        await check(page, "name form")
        await first_visit(page, site + "/", "Ann")
        await expect(page.locator("#open-races")).to_be_visible()
        await check(page, "lobby")
        race = await create_race(page)
        await check(page, "race waiting")
        bob = await player(race_server.url, "Bob")
        try:
            await bob.join(race)
            await bob.wait_for(Started)
            await expect(page.locator(".race-page [data-status=running]")).to_be_visible()
            await check(page, "race running")
            watcher = await context.new_page()
            await watcher.goto(f"{site}/watch/{race}")
            await expect(watcher.locator(".watch-page")).to_be_visible()
            await check(watcher, "watch running")
            await bob.resign(race)
            await page.click("[data-action=resign]")
            await bob.wait_for(RaceResult)
            await expect(page.locator(".result-overlay")).to_be_visible()
            await check(page, "race result")
        finally:
            await bob.close()
        pat = await player(race_server.url, "Pat")
        handle = f"a11y_{secrets.token_hex(4)}"
        await pat.register(handle, "a long enough passphrase 7")
        await pat.close()
        for path, ready, state in [
            (f"/replay/{race}", ".replay-page", "replay"),
            (f"/player/{handle}", ".player-page", "player page"),
            ("/account", ".account-page", "account"),
            ("/rules", ".rules-page", "rules"),
            ("/leaderboard", "table.leaderboard, .leaderboard-page", "leaderboard"),
            ("/no/such/page", ".not-found", "404"),
        ]:
            await page.goto(site + path)
            await expect(page.locator(ready).first).to_be_visible()
            await check(page, state)
    assert not found, "axe found:\n" + "\n".join(found)
    assert not headless, f"pages without one main heading: {headless}"
