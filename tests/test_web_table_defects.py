"""What a player at the race page met that it should not: an attempt ended by one click on Stuck, buttons and cards
live during the countdown and after the attempt ended, a result panel that hid the final board for good, no warning as
the time limit ran out, an opponent "online" while the page itself was offline, a finished race's watch page with a
running clock and no winner, a spectator reading "0 watching", "1 games", and a long name pushing Join out of the
lobby."""

from __future__ import annotations

import asyncio

from browser_helpers import create_race, first_visit, http_url, launched_browser, shot
from playwright.async_api import Dialog, Page, ViewportSize, expect
from race_helpers import player, server_config

from client import RaceClient
from server.app import RaceServer
from shared.protocol import RaceResult, RaceSettings, Started

DESKTOP = ViewportSize(width=1280, height=800)
PHONE = ViewportSize(width=390, height=844)


async def race_with_bob(page: Page, url: str, countdown_wait: bool = True) -> tuple[str, RaceClient]:
    """The page (Ann) creates a race and a Python Bob joins it; the race id and Bob."""
    await first_visit(page, http_url(url) + "/", "Ann")
    race = await create_race(page)
    bob = await player(url, "Bob")
    await bob.join(race)
    if countdown_wait:
        await bob.wait_for(Started)
        await expect(page.locator(".race-page [data-status=running]")).to_be_visible()
    return race, bob


async def test_stuck_asks_first_and_nothing_looks_playable_in_the_countdown_or_after_the_attempt(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, countdown_seconds=2.5)) as server, launched_browser() as browser:
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        _, bob = await race_with_bob(page, server.url, countdown_wait=False)
        try:
            await expect(page.locator(".race-page [data-status=countdown]")).to_be_visible()
            await expect(page.locator(".table .board .card").first).to_be_visible()
            await expect(page.locator("[data-action=stuck]")).to_be_disabled()
            await expect(page.locator("[data-action=resign]")).to_be_disabled()
            assert await page.locator(".table .card.available").count() == 0, "cards look playable during the countdown"

            await bob.wait_for(Started)
            await expect(page.locator("[data-action=stuck]")).to_be_enabled()
            assert await page.locator(".table .card.available").count() > 0
            asked: list[str] = []

            async def decline(dialog: Dialog) -> None:
                asked.append(dialog.message)
                await dialog.dismiss()

            page.once("dialog", decline)
            await page.click("[data-action=stuck]")
            await until_asked(asked)
            assert "stuck" in asked[0].lower()
            await expect(page.locator(".player.me .state")).to_have_text("playing")

            page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
            await page.click("[data-action=stuck]")
            await expect(page.locator(".player.me .state")).not_to_have_text("playing")
            await expect(page.locator("[data-action=stuck]")).to_be_disabled()
            assert await page.locator(".table .card.available").count() == 0, "cards look playable after the attempt ended"
            await expect(page.locator(".table .board.interactive")).to_have_count(0)
        finally:
            await bob.close()


async def until_asked(asked: list[str]) -> None:
    """Wait until the page's confirm dialog was answered."""
    async with asyncio.timeout(10):
        while not asked:
            await asyncio.sleep(0.05)


async def test_the_result_panel_steps_aside_for_the_final_board_and_comes_back(race_server: RaceServer) -> None:
    async with launched_browser() as browser:
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        race, bob = await race_with_bob(page, race_server.url)
        try:
            await bob.resign(race)
            await page.click("[data-action=resign]")
            await expect(page.locator(".result-overlay")).to_be_visible()
            await page.click("[data-action=hide-result]")
            await expect(page.locator(".result-overlay")).to_have_count(0)
            await expect(page.locator(".table .column .card").first).to_be_visible()
            await shot(page, "defects-final-board")
            await page.click("[data-action=show-result]")
            await expect(page.locator(".result-overlay .result .headline")).to_be_visible()
        finally:
            await bob.close()


async def test_the_clock_turns_into_a_red_countdown_in_the_last_30_seconds(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    seated = await ann.create(RaceSettings(time_limit=25))
    try:
        async with launched_browser() as browser:
            page = await (await browser.new_context(viewport=DESKTOP)).new_page()
            await first_visit(page, f"{http_url(race_server.url)}/race/{seated.race.race}", "Bob")
            await page.click("text=Join this race")
            await expect(page.locator(".race-page [data-status=running]")).to_be_visible()
            clock = page.locator(".race-page .clock-line.low-time .clock")
            await expect(clock).to_contain_text("left")
            colour = await clock.evaluate("(node) => getComputedStyle(node).color")
            assert colour != await page.locator(".race-page .limit").evaluate("(node) => getComputedStyle(node).color")
            await shot(page, "defects-low-time")
    finally:
        await ann.close()


async def test_while_the_page_is_offline_the_opponent_is_not_said_to_be_online(redis_url: str) -> None:
    async with launched_browser() as browser:
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        async with RaceServer(server_config(redis_url)) as server:
            _, bob = await race_with_bob(page, server.url)
            await expect(page.locator(".player:not(.me) .presence")).to_have_text("online")
            await bob.close()
        # The server is gone: the page reconnects in vain and cannot know where the opponent is.
        await expect(page.locator("#connection")).not_to_have_text("online")
        await expect(page.locator(".player:not(.me) .presence")).to_have_text("not known")


async def test_a_finished_race_watched_later_shows_its_winner_and_its_own_length(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    bob = await player(race_server.url, "Bob")
    try:
        race = (await ann.create(RaceSettings(spectator_delay=0))).race.race
        await bob.join(race)
        await ann.wait_for(Started)
        await ann.resign(race)
        await bob.resign(race)
        result = await ann.wait_for(RaceResult)
        async with launched_browser() as browser:
            page = await (await browser.new_context(viewport=DESKTOP)).new_page()
            await first_visit(page, f"{http_url(race_server.url)}/watch/{race}", "Wes")
            await expect(page.locator(".watch-footer .result .headline")).to_be_visible()
            clock = page.locator(".watch-page .clock")
            shown = await clock.text_content()
            await asyncio.sleep(1.5)
            assert await clock.text_content() == shown, "the clock of a finished race runs on"
            assert result.at is not None
            await expect(page.locator(".watch-page .watchers")).to_have_text("you are watching")
            await shot(page, "defects-watch-finished")
    finally:
        await ann.close()
        await bob.close()


async def test_one_game_is_one_game_and_a_32_letter_name_keeps_join_in_the_lobby(race_server: RaceServer) -> None:
    long_name = "W" * 32
    creator = await player(race_server.url, long_name)
    try:
        await creator.create(RaceSettings())
        async with launched_browser() as browser:
            for viewport in (DESKTOP, PHONE):
                page = await (await browser.new_context(viewport=viewport)).new_page()
                await first_visit(page, http_url(race_server.url) + "/", "Ann")
                row = page.locator("#open-races .race-row", has_text=long_name[:20])
                await expect(row).to_be_visible()
                join = row.locator("button", has_text="Join")
                inside = await join.evaluate(
                    "(node) => { const panel = node.closest('.panel').getBoundingClientRect(); const box = node.getBoundingClientRect();"
                    " return box.right <= panel.right + 0.5 && box.left >= panel.left; }"
                )
                assert inside, f"Join is pushed out of the lobby panel at {viewport['width']} px"
                await shot(page, f"defects-long-name-{viewport['width']}")
                words = await page.evaluate(
                    "async () => { const base = document.documentElement.dataset.static;"
                    " const m = await import(base + 'js/players.js');"
                    " const words = await import(base + 'js/i18n.js');"
                    " return [m.gamesText(1), m.gamesText(2), words.tn('web.rating.rated_games', 1)]; }"
                )
                assert words == ["1 game", "2 games", "1 rated game"]
    finally:
        await creator.close()
