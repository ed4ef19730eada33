"""The race table fits the screens people have: the foundations, six columns at their longest, the whole bouquet and
the controls on screen without scrolling at 1366×768 (the commonest laptop), 1280×720 and a 390×844 phone, with cards
as large as the height allows. Screenshots are saved under tmp/artifacts/web/ (fit-*.png) to look at."""

from __future__ import annotations

import pytest
from browser_helpers import create_race, first_visit, http_url, launched_browser, shot
from playwright.async_api import Page, ViewportSize, expect
from race_helpers import player

from server.app import RaceServer

SCREENS = {
    "laptop-1366x768": ViewportSize(width=1366, height=768),
    "laptop-1280x720": ViewportSize(width=1280, height=720),
    "phone-390x844": ViewportSize(width=390, height=844),
}

LONGEST_TABLE = {
    # 36 cards in the columns with the bouquet still full: an 18-card column (a king dealt last, then queen to ace
    # built on it) and a 13-card one (king to ace on an emptied column) — as long as columns get beside 16 bouquet cards.
    "columns": [
        ["3C", "9D", "4H", "JS", "2D", "KC", "QD", "JC", "TD", "9C", "8D", "7C", "6D", "5C", "4D", "3S", "2H", "AC"],
        ["KD", "QC", "JD", "TC", "9H", "8C", "7D", "6C", "5D", "4C", "3D", "2C", "AD"],
        ["5S", "6S", "7S", "8S", "9S"],
        [],
        [],
        [],
    ],
    "bouquet": ["TS", "QS", "KS", "AS", "2S", "4S", "AH", "3H", "5H", "6H", "7H", "8H", "TH", "JH", "QH", "KH"],
    "foundations": [0, 0, 0, 0],
}


async def show_longest_table(page: Page) -> None:
    """Draw LONGEST_TABLE as the player's board (a layout check: the server's board is not changed)."""
    await page.evaluate(
        """async (layout) => {
            const { Board } = await import(document.documentElement.dataset.static + "js/engine.js");
            const view = window.flowerGarden.view;
            view.state.boards[view.state.mySlot] = new Board(layout, view.state.settings);
            view.render();
        }""",
        LONGEST_TABLE,
    )


async def outside_viewport(page: Page, selectors: list[str]) -> list[str]:
    """The selectors (each may match several elements) with an element not wholly on screen."""
    return list(
        await page.evaluate(
            """(selectors) => selectors.filter((selector) => [...document.querySelectorAll(selector)].some((node) => {
                const box = node.getBoundingClientRect();
                return box.width === 0 || box.top < 0 || box.left < 0 || box.bottom > innerHeight + 0.5 || box.right > innerWidth + 0.5;
            }))""",
            selectors,
        )
    )


async def card_width(page: Page) -> float:
    """The width of the table's cards, in CSS pixels."""
    return float(await page.locator('.table [data-pile="b"] .card').first.evaluate("(node) => node.getBoundingClientRect().width"))


@pytest.mark.parametrize("screen", SCREENS)
async def test_the_whole_table_fits_the_screen_without_scrolling_with_the_longest_columns(race_server: RaceServer, screen: str) -> None:
    """At 1366×768 the bouquet was cut and Stuck/Resign sat below the fold; a 13-card column grew the page."""
    viewport = SCREENS[screen]
    phone = viewport["width"] < 500
    async with launched_browser() as browser:
        context = await browser.new_context(viewport=viewport, has_touch=phone)
        page = await context.new_page()
        await first_visit(page, http_url(race_server.url) + "/", "Ann")
        race = await create_race(page)
        bob = await player(race_server.url, "Bob")
        try:
            await bob.join(race)
            await expect(page.locator(".race-page [data-status=running]")).to_be_visible()
            await shot(page, f"fit-{screen}-deal")
            assert await card_width(page) >= (46 if phone else 70)  # as large as the height allows
            assert await outside_viewport(page, [".table .foundations", ".table .column .card", ".table [data-pile=b] .card", "[data-action=stuck]", "[data-action=resign]"]) == []
            await show_longest_table(page)
            await expect(page.locator('.table [data-pile="1"] .card')).to_have_count(18)
            await shot(page, f"fit-{screen}-longest")
            pieces = [".table .foundations", ".table .column .card", ".table [data-pile=b] .card", "[data-action=stuck]", "[data-action=resign]", ".race-header .clock"]
            assert await outside_viewport(page, pieces) == []
            scroll = await page.evaluate("() => [document.scrollingElement.scrollHeight, document.scrollingElement.scrollWidth]")
            assert scroll[0] <= viewport["height"] and scroll[1] <= viewport["width"], f"the page scrolls: {scroll}"
            assert await card_width(page) >= (38 if phone else 50)  # smaller beside the longest columns, still readable
        finally:
            await bob.close()
