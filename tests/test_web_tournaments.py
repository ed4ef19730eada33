"""The tournament pages in a real headless Chromium: ``/tournaments`` lists the listed arenas by status (a private
one never), and a finished arena's page shows its podium, at ``/tournament/<id>`` and at ``/arena/<id>`` alike, in
English and in Spanish (the word tables).

Screenshots land in tmp/artifacts/web/ (tournaments-*.png).
"""

from __future__ import annotations

import secrets

from browser_helpers import first_visit, http_url, launched_browser, shot
from playwright.async_api import expect
from test_web_languages import assert_spoken, page_in

from server.app import RaceServer
from server.services.arena import ArenaService
from server.store import Identity
from shared.arena import ArenaGame
from shared.protocol import Outcome
from shared.words import LANGUAGES

MINUTE = 60_000


async def a_finished_arena(arenas: ArenaService, now: int) -> str:
    """A listed arena whose clock ran out a minute ago, with three players and two booked races: Ann 4, Bob 2, Cat 0."""
    arena = await arenas.create(f"Evening {secrets.token_hex(2)}", now - 30 * MINUTE, 29 * MINUTE, private=False)
    for player in ("ann", "bob", "cat"):
        await arenas.store.join(arena, Identity(player, player.title(), f"{player.title()}{arena[:4]}"), 1500.0, now - 30 * MINUTE)
    for race, (winner, loser) in enumerate((("ann", "bob"), ("bob", "cat"), ("ann", "cat"))):
        games = {winner: ArenaGame(f"r{race}", loser, Outcome.WON, False, 20, 1500.0), loser: ArenaGame(f"r{race}", winner, Outcome.LOST, False, 20, 1500.0)}
        assert await arenas.store.book(arena, f"r{race}", games, now - 20 * MINUTE)
    return arena


async def test_the_list_shows_listed_arenas_by_status_and_a_finished_arena_its_podium(race_server: RaceServer) -> None:
    assert race_server.arenas is not None and race_server.races is not None
    now = await race_server.races.now_ms()
    finished = await a_finished_arena(race_server.arenas, now)
    running = await race_server.arenas.create(f"Hourly {secrets.token_hex(2)}", now, 30 * MINUTE, private=False)
    upcoming = await race_server.arenas.create(f"Nightly {secrets.token_hex(2)}", now + 60 * MINUTE, 30 * MINUTE, private=False, rated=True)
    private = await race_server.arenas.create("Friends only", now, 30 * MINUTE)
    site = http_url(race_server.url)
    async with launched_browser() as browser:
        page = await (await browser.new_context(viewport={"width": 1280, "height": 900})).new_page()
        await first_visit(page, site + "/", "Gus")
        await page.click("a.nav[href='/tournaments']")
        for kind, arena in (("running", running), ("upcoming", upcoming), ("finished", finished)):
            await expect(page.locator(f"[data-list={kind}] li[data-arena='{arena}']")).to_be_visible()
        await expect(page.locator(f"li[data-arena='{private}']")).to_have_count(0)
        await expect(page.locator(f"[data-list=upcoming] li[data-arena='{upcoming}']")).to_contain_text("rated")
        await shot(page, "tournaments-list")
        await page.click(f"[data-list=finished] li[data-arena='{finished}'] a")
        await expect(page).to_have_url(f"{site}/tournament/{finished}")
        podium = page.locator(".arena-podium li")
        await expect(podium).to_have_count(3)
        await expect(podium.nth(0)).to_contain_text(f"Ann{finished[:4]} · 4 points")
        await expect(podium.nth(1)).to_contain_text(f"Bob{finished[:4]} · 2 points")
        await expect(podium.nth(2)).to_contain_text(f"Cat{finished[:4]} · 0 points")
        await shot(page, "tournaments-podium")
        await page.goto(f"{site}/tournament/{running}")
        await expect(page.locator(".arena-page h1")).to_be_visible()
        await expect(page.locator(".arena-podium li")).to_have_count(0)  # no podium while the clock runs

        for language in LANGUAGES:  # no key and no English left on either page, in each language
            context, other = await page_in(browser, language)
            await first_visit(other, f"{site}/tournaments", "Lola")
            await expect(other.locator(f"[data-list=finished] li[data-arena='{finished}']")).to_be_visible()
            await assert_spoken(other, language, "tournaments")
            await other.goto(f"{site}/tournament/{finished}")
            await expect(other.locator(".arena-podium li")).to_have_count(3)
            await assert_spoken(other, language, "podium")
            await context.close()

        spanish = await (await browser.new_context(viewport={"width": 1280, "height": 900}, locale="es-ES")).new_page()
        await first_visit(spanish, f"{site}/arena/{finished}", "Lola")  # the old path shows the same page
        await expect(spanish.locator(".arena-podium h2")).to_have_text("Podio")
        await expect(spanish.locator(".arena-podium li").nth(0)).to_contain_text("4 puntos")
        await spanish.goto(site + "/tournaments")
        await expect(spanish.locator(".tournaments-page h1")).to_have_text("Torneos")
        await expect(spanish.locator("[data-list=finished] h2")).to_have_text("Terminados")
