"""The /daily page in a real headless Chromium, with a daily clock the test sets: a guest plays today's deal by
clicking (uncounted) and stops; nothing of a registered player's cleared attempt shows before the day ends; then
the page reveals the seed, the leaderboard and the statistics, replays that attempt at its pace and races it as a
ghost.

Screenshots land in tmp/artifacts/web/ (daily-*.png).
"""

from __future__ import annotations

import re

from browser_helpers import click_move, first_visit, http_url, launched_browser, shot
from daily_helpers import TestClock, daily_server
from player_helpers import new_handle, registered
from playwright.async_api import ViewportSize, expect
from race_helpers import player
from winning_lines import winning_deal

from server.app import RaceServer
from shared.daily import DAY_MS, day_of, day_start
from shared.protocol import Daily

__all__ = ["daily_server"]  # the fixture
DESKTOP = ViewportSize(width=1280, height=900)
BOARD = ".daily-play .table"


async def test_a_guest_plays_the_daily_deal_and_sees_the_day_revealed_after_its_end(daily_server: tuple[RaceServer, TestClock]) -> None:
    server, clock = daily_server
    _, line = winning_deal()
    day = day_of(clock.now)
    handle = new_handle("eve")
    eve = await registered(server.url, handle)
    attempt = await eve.daily_start()
    for number, move in enumerate(line):
        clock.now += 10  # replayed at this pace
        await eve.daily_move(attempt.attempt, number, move)
    await eve.close()
    site = http_url(server.url)
    async with launched_browser() as browser:
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        await first_visit(page, site + "/daily", "Gus")
        panel = page.locator(".daily-page")
        await expect(panel.locator("h1")).to_have_text(f"Daily deal of {day}")
        await expect(panel.locator(".commitment code")).to_have_text((await todays_deal(server)).commitment)
        await expect(panel.locator(".daily-board")).to_have_count(0)  # the day is not over: no leaderboard
        await page.click("[data-action=daily-play]")
        await expect(page.locator(".daily-play .clock")).to_have_text(re.compile(r"Time left 1[45]:\d\d"))  # 15 minutes
        for move in line[:3]:
            await click_move(page, BOARD, move)
        await shot(page, "daily-playing")
        await page.click("[data-action=daily-stop]")
        await expect(page.locator(".daily-status")).to_contain_text("Attempt over: stopped")

        clock.now = day_start(day) + DAY_MS + 1000
        await page.goto(site + f"/daily?day={day}")
        row = page.locator(f'.daily-board tr[data-handle="{handle}"]')
        await expect(row).to_contain_text("cleared: 52/52")
        await expect(page.locator(".daily-reveal .stats")).to_contain_text("1 played, 1 cleared (100%)")
        await row.locator("[data-action=daily-replay]").click()
        # at the recorded pace (10 ms a move), however slowly a busy machine draws the board
        await expect(page.locator(".replay-caption")).to_contain_text(f"{len(line)} / {len(line)} moves — cleared", timeout=60_000)
        await expect(page.locator(".daily-replay [data-pile=f] [data-card]")).to_have_count(4)
        await shot(page, "daily-revealed")
        await row.locator("[data-action=daily-ghost]").click()  # race that attempt as a ghost
        await expect(page.locator(".race-settings")).to_contain_text(f"ghost race: daily {day} {handle}")
        await expect(page.locator(".result .headline")).to_be_visible(timeout=30_000)  # the ghost clears at its pace
        await shot(page, "daily-ghost-race")


async def todays_deal(server: RaceServer) -> Daily:
    """Today's deal as a fresh guest sees it."""
    guest = await player(server.url, "Wes")
    try:
        return await guest.daily()
    finally:
        await guest.close()
