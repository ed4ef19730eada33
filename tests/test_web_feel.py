"""How the race page feels, in a real headless Chromium against a real server: the tab's title says when the opponent
joined and the race started (until the player acts), sounds play for the start, a move, a refusal, the opponent's
progress and the result (none once muted; the mute switch is remembered across a reload), the moved card flies to
where it went, and a win is celebrated.

Sounds are generated with WebAudio; the page counts what it played (``flowerGarden.feel.played``), which is what this
test reads: headless Chromium has no speakers to listen to. Screenshots land in tmp/artifacts/web/ (feel-*.png).
"""

from __future__ import annotations

import re

from browser_helpers import click_move, create_race, destination, first_visit, http_url, launched_browser, shot, until
from playwright.async_api import Page, ViewportSize, expect
from race_helpers import play, player, seated_race, server_config
from winning_lines import first_foundation_prefix, winning_deal

from server.app import RaceServer
from shared import Board, card_text, parse_action, rank_of
from shared.protocol import RaceSettings, Started

DESKTOP = ViewportSize(width=1366, height=768)
BOARD = ".race-page .table"


async def played(page: Page) -> list[str]:
    sounds: list[str] = await page.evaluate("[...flowerGarden.feel.played]")
    return sounds


async def sounded(page: Page, name: str, times: int = 1) -> None:
    async def heard() -> bool:
        return (await played(page)).count(name) >= times

    await until(heard)


def refused_column_move(board: Board) -> str:
    """A column card onto a column whose last card is not one rank higher (refused ``column_rank_mismatch``)."""
    for source, column in enumerate(board.columns):
        for target, other in enumerate(board.columns):
            if column and other and source != target and rank_of(other[-1]) != rank_of(column[-1]) + 1:
                return f"{card_text(column[-1])} {source + 1}>{target + 1}"
    raise AssertionError("no refused column move on this board")


async def test_the_race_page_cues_the_start_sounds_its_events_until_muted_flies_cards_and_celebrates_a_win(redis_url: str) -> None:
    seed, line = winning_deal()
    prefix = first_foundation_prefix(seed, line, 1)
    async with RaceServer(server_config(redis_url)) as server, launched_browser() as browser:
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("dialog", lambda dialog: dialog.accept())
        await first_visit(page, http_url(server.url) + "/", "Ann")
        race = await create_race(page, seed)
        bob = await player(server.url, "Bob")
        await bob.join(race)
        await bob.wait_for(Started)
        await expect(page.locator(".race-page [data-status=running]")).to_be_visible()
        await sounded(page, "joined")
        await sounded(page, "start")
        await expect(page).to_have_title(re.compile(r"^▶ The race started · Race "))
        await page.mouse.click(5, 300)  # the player is back at the page: the title is plain again
        await expect(page).to_have_title(f"Race {race} · Flower Garden Race")

        for move in prefix:
            await click_move(page, BOARD, move)
        assert (await played(page)).count("move") == len(prefix)
        assert await page.evaluate("flowerGarden.feel.flights") >= len(prefix), "the moved cards did not fly"

        board = Board.deal(seed)
        for move in prefix:
            board.play(parse_action(move))
        refused = refused_column_move(board)
        card, places = refused.split()
        await page.click(f'{BOARD} [data-card="{card}"]')
        await page.click(f'{BOARD} [data-pile="{places.split(">")[1]}"]')
        await expect(page.locator(".notice .refusal")).to_have_attribute("data-code", "column_rank_mismatch")
        await sounded(page, "refusal")

        switch = page.locator("[data-action=sound]")
        await expect(switch).to_have_attribute("data-sound", "on")
        await switch.click()
        await expect(switch).to_have_attribute("data-sound", "off")
        await page.reload()
        await expect(page.locator(f"{BOARD} [data-card]").first).to_be_visible()
        await expect(page.locator("[data-action=sound]")).to_have_attribute("data-sound", "off")
        await page.click(f'{BOARD} [data-card="{card}"]')
        await page.click(f'{BOARD} [data-pile="{places.split(">")[1]}"]')
        await expect(page.locator(".notice .refusal")).to_have_attribute("data-code", "column_rank_mismatch")
        assert await played(page) == [], "a muted page played a sound"
        await page.locator("[data-action=sound]").click()
        await expect(page.locator("[data-action=sound]")).to_have_attribute("data-sound", "on")

        # Bob makes progress: a quarter of the pack on his foundations sounds a cue on Ann's page; then Ann resigns
        # behind, and the lost race sounds its result.
        almost = first_foundation_prefix(seed, line, 12)
        await play(bob, race, almost)
        await expect(page.locator(".player[data-slot='1'] .count")).to_have_attribute("data-count", "12")
        assert "milestone" not in await played(page)
        await play(bob, race, first_foundation_prefix(seed, line, 13)[len(almost) :])
        await sounded(page, "milestone")
        await page.click("[data-action=resign]")
        await expect(page.locator(".result .headline")).to_have_text("Bob (guest) wins")
        await sounded(page, "result")
        await expect(page.locator(f"{BOARD} .celebration")).to_have_count(0)

        # A second race: Ann ahead when Bob resigns, so she wins at once, and the win is celebrated.
        await page.click("a.brand")
        second = await create_race(page, seed)
        await bob.join(second)
        await bob.wait_for(Started)
        await expect(page.locator(f'.race-page[data-race="{second}"] [data-status=running]')).to_be_visible()
        for move in prefix:
            await click_move(page, BOARD, move)
        await bob.resign(second)
        await expect(page.locator(".result .headline")).to_have_text("You win!")
        await sounded(page, "win")
        await expect(page.locator(f"{BOARD} .celebration")).to_be_attached()
        await shot(page, "feel-01-win")
        assert errors == []
        await bob.close()


async def test_a_spectator_sees_each_moved_card_slide_except_under_reduced_motion(redis_url: str) -> None:
    """The watch page redrew the boards in place: cards jumped for spectators while they slid for the players."""
    seed, line = winning_deal()
    prefix = first_foundation_prefix(seed, line, 1)
    async with RaceServer(server_config(redis_url)) as server, launched_browser() as browser:
        race = await seated_race(server.url, RaceSettings(seed=seed, spectator_delay=0))
        try:
            watchers = {}
            for motion in ("no-preference", "reduce"):
                page = await (await browser.new_context(viewport=DESKTOP, reduced_motion=motion)).new_page()
                await first_visit(page, f"{http_url(server.url)}/watch/{race.race_id}", f"Wes {motion}"[:20])
                await expect(page.locator('.watch-page .table[data-slot="0"] [data-card]').first).to_be_visible()
                watchers[motion] = page
            await play(race.ann, race.race_id, prefix)
            for page in watchers.values():
                await expect(page.locator(destination('.watch-page .table[data-slot="0"]', prefix[-1]))).to_be_visible()
            assert await watchers["no-preference"].evaluate("flowerGarden.feel.flights") >= len(prefix), "the spectator's cards jumped"
            assert await watchers["reduce"].evaluate("flowerGarden.feel.flights") == 0, "cards moved under reduced motion"
        finally:
            await race.ann.close()
            await race.bob.close()
