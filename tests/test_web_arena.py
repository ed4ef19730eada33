"""An arena in a real headless Chromium: two registered players open and join it from two browser contexts, a third
joins from a client; the pairing opens the race page of each paired browser player by itself, and the standings list
all three.

Screenshots land in tmp/artifacts/web/ (arena-*.png).
"""

from __future__ import annotations

import re

from browser_helpers import first_visit, http_url, launched_browser, shot
from lobby_helpers import wait_until
from player_helpers import PASSWORD, new_handle, registered
from playwright.async_api import Page, ViewportSize, expect

from server.app import RaceServer

DESKTOP = ViewportSize(width=1280, height=900)


async def register(page: Page, url: str, handle: str) -> None:
    """A first visit of ``url``, registering ``handle`` on /account (from the top bar), then back to ``url``."""
    await first_visit(page, url, handle)
    await page.click("#who [data-action=login]")
    form = page.locator("form[data-form=register]")
    await form.locator("input[name=handle]").fill(handle)
    await form.locator("input[name=password]").fill(PASSWORD)
    await form.locator("button[type=submit]").click()
    await expect(page.locator("#who .rating")).to_have_text("unrated")  # registered (a guest's name is the handle too)
    await page.goto(url)  # the page keeps the account's session across a reload


async def test_two_browsers_and_a_client_join_an_arena_and_the_paired_pages_open_their_race(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    handles = [new_handle("ann"), new_handle("bob")]
    cat = await registered(race_server.url, new_handle("cat"))
    try:
        async with launched_browser() as browser:
            pages = [await (await browser.new_context(viewport=DESKTOP)).new_page() for _ in handles]
            await register(pages[0], site + "/", handles[0])
            await pages[0].click("a.nav[href='/tournaments']")
            await pages[0].click(".tournaments-page a[href='/arena']")  # a private arena of one's own
            await pages[0].fill("form[data-form=arena] input[name=name]", "evening")
            await pages[0].click("form[data-form=arena] button[type=submit]")
            await expect(pages[0].locator(".arena-page h1")).to_have_text("Arena evening")
            arena = pages[0].url.rsplit("/", 1)[1]
            await register(pages[1], site + "/", handles[1])
            await pages[1].goto(site + f"/arena/{arena}")  # the link shared with the second player
            for page in pages:
                await page.click("[data-action=arena-join]")
                await expect(page.locator(".arena-status")).to_have_text("You are in: your next race opens by itself.")
            await shot(pages[1], "arena-joined")
            await cat.arena_join(arena)
            assert race_server.arenas is not None
            store = race_server.arenas.store

            async def paired() -> bool:
                return len(await store.busy(arena)) == 2

            await wait_until(paired, timeout=20, what="a pair")
            busy = await store.busy(arena)
            (race,) = set(busy.values())
            players = {handle: player for player, handle in ((player, who.account) for player, who in (await store.identities(arena)).items())}
            for page, handle in zip(pages, handles, strict=True):
                if players[handle] in busy:
                    await expect(page).to_have_url(re.compile(f"/race/{race}$"), timeout=20_000)  # opened by itself
                    await expect(page.locator(".race-page")).to_be_visible()
                else:
                    await expect(page.locator(".arena-standings tbody tr")).to_have_count(3)
            await shot(pages[0], "arena-page-0")
    finally:
        await cat.close()
