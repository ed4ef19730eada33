"""The race page's result covers the table: no card shows through it or above it, on a desktop and a phone.

The check reads the screenshot's pixels: inside the result, where a card lies under it and no text of the result
is, the colour is the result's own background, the same as beside the cards (the table's padding).
"""

from __future__ import annotations

from itertools import pairwise

from browser_helpers import create_race, first_visit, http_url, launched_browser, pixels, shot
from playwright.async_api import Page, ViewportSize, expect
from race_helpers import player, server_config

from server.app import RaceServer
from shared.protocol import RaceResult, Started

VIEWPORTS = {"desktop": ViewportSize(width=1280, height=900), "phone": ViewportSize(width=390, height=844)}

CARDS_UNDER_THE_RESULT = """() => {
    const overlay = document.querySelector(".race-page .table .result-overlay");
    const box = overlay.getBoundingClientRect();
    const boxes = [...overlay.querySelectorAll("*")].map((node) => node.getBoundingClientRect());
    // what the panel draws (text, buttons, row lines), not the boxes that hold half of it or more
    const texts = boxes.filter((r) => r.width && r.height && r.width * r.height < (box.width * box.height) / 2);
    const clear = (x, y) => texts.every((t) => x < t.left - 2 || x > t.right + 2 || y < t.top - 2 || y > t.bottom + 2);
    const cards = [...document.querySelectorAll(".race-page .table .card")].map((card) => card.getBoundingClientRect());
    const under = cards.filter((r) => r.width && r.top > box.top && r.bottom < box.bottom && r.left > box.left && r.right < box.right);
    const points = [];  // points of the cards under the result where none of its text or buttons is drawn
    for (const r of under) {
        for (let i = 1; i < 5; i += 1) {
            for (let j = 1; j < 5; j += 1) {
                const [x, y] = [Math.round(r.left + (r.width * i) / 5), Math.round(r.top + (r.height * j) / 5)];
                if (clear(x, y)) points.push([x, y]);
            }
        }
    }
    return {
        under: under.length,
        points: points,
        beside: [Math.round(box.left + 4), Math.round(box.top + box.height / 2)],
        topmost: under.map((r) => overlay.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2))),
    };
}"""
"""The cards under the result panel, whether the panel is drawn over each, and the points of them clear of its text
(the panel's layout differs by width: on a phone its text covers most of it)."""


async def finished_race_page(page: Page, url: str) -> None:
    """The page creates a race, a Python player joins, both resign: the page shows the result over its table."""
    page.on("dialog", lambda dialog: dialog.accept())
    await first_visit(page, http_url(url) + "/", "Ann")
    race = await create_race(page)
    bob = await player(url, "Bob")
    try:
        await bob.join(race)
        await bob.wait_for(Started)
        await expect(page.locator(".race-page [data-status=running]")).to_be_visible()
        await bob.resign(race)
        await page.click("button[data-action=resign]")
        await bob.wait_for(RaceResult)
    finally:
        await bob.close()
    await expect(page.locator(".result-overlay .result .headline")).to_be_visible()


async def test_no_card_shows_through_or_over_the_result(race_server: RaceServer) -> None:
    async with launched_browser() as browser:
        for name, viewport in VIEWPORTS.items():
            context = await browser.new_context(viewport=viewport)
            page = await context.new_page()
            await finished_race_page(page, race_server.url)
            await shot(page, f"result-overlay-{name}")
            probe = await page.evaluate(CARDS_UNDER_THE_RESULT)
            assert probe["under"] and probe["points"], f"{name}: no card lies under the result clear of its text"
            assert all(probe["topmost"]), f"{name}: a card is drawn above the result"
            png = await page.screenshot()
            points = [tuple(probe["beside"])] + [tuple(point) for point in probe["points"]]
            colours = await pixels(browser, png, points)
            background, under_cards = colours[0], colours[1:]
            assert all(colour == background for colour in under_cards), f"{name}: cards show through the result: {background} vs {under_cards[:10]}"
            await context.close()


async def test_on_a_phone_the_result_table_against_a_bot_fits_the_width_with_every_column(redis_url: str) -> None:
    """A bot's long handle (FlowerBot3_123456 BOT) pushed the table's "Ended" column out of sight on a 390 px screen."""
    async with RaceServer(server_config(redis_url, bot_pace=0.0)) as server, launched_browser() as browser:
        context = await browser.new_context(viewport=VIEWPORTS["phone"], has_touch=True)
        page = await context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        await first_visit(page, http_url(server.url) + "/", "Phil")
        await page.click("button[data-action=race-bot]")
        await expect(page.locator('.player[data-slot="1"] .pname[data-kind="bot"]')).to_be_visible()
        await expect(page.locator(".race-page [data-status=running], .race-page [data-status=finished]")).to_be_visible()
        await page.locator("button[data-action=resign]").dispatch_event("click")  # disabled once the bot has won
        result = page.locator(".result-overlay .result")
        await expect(result.locator(".headline")).to_be_visible()
        await shot(page, "result-phone-bot")
        widths = await result.evaluate("(node) => [node.scrollWidth, node.clientWidth]")
        assert widths[0] <= widths[1], f"the result table is wider than the screen: {widths}"
        ended = await page.locator(".result-table th", has_text="Ended").bounding_box()
        assert ended is not None and ended["x"] + ended["width"] <= VIEWPORTS["phone"]["width"]
        await context.close()


SEAM_STEP = 12
"""The largest change of a colour channel between two neighbouring rows of the page's margin: the felt's gradient
changes by a unit or two over that; a seam (where one background ends and another begins) by more."""


async def test_the_felts_gradient_runs_down_a_page_taller_than_the_screen_without_a_seam(race_server: RaceServer) -> None:
    async with launched_browser() as browser:
        context = await browser.new_context(viewport=VIEWPORTS["phone"])
        page = await context.new_page()
        await finished_race_page(page, race_server.url)
        # The race page fits the screen now (tests/test_web_fit.py): its replay, both boards and the move list stacked
        # on a phone, is the page taller than the screen.
        await page.click(".result-overlay a[href^='/replay/']")
        await expect(page.locator(".replay-page")).to_be_visible()
        height = await page.evaluate("document.documentElement.scrollHeight")
        top = await page.evaluate("Math.ceil(document.querySelector('header.top').getBoundingClientRect().bottom + window.scrollY) + 2")
        assert height > VIEWPORTS["phone"]["height"] + 100, "the page is no taller than the screen"
        await shot(page, "result-overlay-phone-full-page")
        png = await page.screenshot(full_page=True)
        column = await pixels(browser, png, [(1, y) for y in range(top, height - 1)])
        jumps = [(top + index, max(abs(a - b) for a, b in zip(above, below))) for index, (above, below) in enumerate(pairwise(column))]
        seams = [(y, jump) for y, jump in jumps if jump > SEAM_STEP]
        assert not seams, f"the background has seams at (y, colour step) {seams[:5]} on a {height} px page"
        await context.close()
