"""The first-race tutorial in a real headless Chromium: a first-time visitor is offered it in the lobby, plays its small
fixed deal by clicking (a legal move to a foundation, a refused move said in words, a card built on a column, a bouquet
card, then the whole board) to a win with a celebration, and is not offered it again; "No thanks" is remembered too.
Under prefers-reduced-motion no card flies and the petals stand still.

Screenshots land in tmp/artifacts/web/ (tutorial-*.png).
"""

from __future__ import annotations

from browser_helpers import first_visit, http_url, launched_browser, shot
from playwright.async_api import Page, ViewportSize, expect

from server.app import RaceServer

DESKTOP = ViewportSize(width=1366, height=768)
BOARD = ".tutorial-page .table"

FINISH = ["JC 2>f", "JH 5>f", "QS 2>f", "QC 5>f", "QD 3>f", "QH 6>f", "KC 1>f", "KD 3>f", "KH 4>f", "KS 6>f"]
"""After the four guided steps, the rest of the deal to the foundations."""


async def click(page: Page, move: str) -> None:
    """Play ``move`` on the tutorial board by clicking its card, then its destination."""
    card, places = move.split()
    await page.click(f'{BOARD} [data-pile]:not(.foundations) [data-card="{card}"]')
    await page.click(f'{BOARD} [data-pile="{places.split(">")[1]}"]')


async def test_a_first_time_visitor_is_offered_the_tutorial_plays_it_to_a_win_and_is_not_offered_it_again(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    async with launched_browser() as browser:
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await first_visit(page, site + "/", "Newcomer")
        offer = page.locator(".lobby .tutorial-offer")
        await expect(offer).to_be_visible()
        await shot(page, "tutorial-01-offer")
        await offer.locator("[data-action=tutorial]").click()
        await expect(page.locator(".tutorial-step")).to_have_attribute("data-step", "1")
        await shot(page, "tutorial-02-start")

        await click(page, "JD 1>f")
        await expect(page.locator(f'{BOARD} .foundations [data-card="JD"]')).to_be_visible()
        await expect(page.locator(".tutorial-step")).to_have_attribute("data-step", "2")
        await click(page, "QD 3>5")
        notice = page.locator(".tutorial-notice.refusal")
        await expect(notice).to_have_attribute("data-code", "column_rank_mismatch")
        await expect(notice).to_contain_text("Q♦ can't go on column 5: it ends in Q♣, which takes only a card one rank lower")
        await expect(page.locator(f'{BOARD} [data-pile="3"] [data-card="QD"]')).to_be_visible()
        await shot(page, "tutorial-03-refused")
        await expect(page.locator(".tutorial-step")).to_have_attribute("data-step", "3")
        await click(page, "JH 4>5")
        await expect(page.locator(f'{BOARD} [data-pile="5"] [data-card="JH"]')).to_be_visible()
        await expect(page.locator(".tutorial-step")).to_have_attribute("data-step", "4")
        await click(page, "JS b>f")
        await expect(page.locator(".tutorial-step")).to_have_attribute("data-step", "5")
        for move in FINISH:
            await click(page, move)
        await expect(page.locator(".tutorial-step")).to_have_attribute("data-step", "done")
        await expect(page.locator(".tutorial-step")).to_contain_text("You cleared the board")
        await expect(page.locator(f"{BOARD} .celebration")).to_be_attached()
        await shot(page, "tutorial-04-won")
        feel = await page.evaluate("({ played: flowerGarden.feel.played, flights: flowerGarden.feel.flights })")
        assert feel["played"].count("move") == 13 and "refusal" in feel["played"] and feel["played"][-1] == "win"
        assert feel["flights"] >= 13, "the moved cards did not fly to where they went"

        await page.click("a.brand")
        await expect(page.locator(".lobby")).to_be_visible()
        await expect(page.locator(".tutorial-offer")).to_have_count(0)
        await page.reload()
        await expect(page.locator(".lobby")).to_be_visible()
        await expect(page.locator(".tutorial-offer")).to_have_count(0)

        # Another first-time visitor says "No thanks", with reduced motion: not offered again; nothing flies.
        calm = await (await browser.new_context(viewport=DESKTOP, reduced_motion="reduce")).new_page()
        await first_visit(calm, site + "/", "Calm")
        await calm.click(".tutorial-offer [data-action=dismiss-tutorial]")
        await expect(calm.locator(".tutorial-offer")).to_have_count(0)
        await calm.reload()
        await expect(calm.locator(".lobby")).to_be_visible()
        await expect(calm.locator(".tutorial-offer")).to_have_count(0)
        await calm.goto(site + "/tutorial")
        for move in ["JD 1>f", "JH 4>5", "JS b>f", *FINISH]:
            await click(calm, move)
        await expect(calm.locator(f"{BOARD} .celebration.still")).to_be_attached()
        assert await calm.evaluate("flowerGarden.feel.flights") == 0
        assert errors == []
