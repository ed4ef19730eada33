"""The replay page shows the post-race analysis: the fatal move marked in the move list, each player's verdict, and
a winning line from any point of a player's line (the server's solver, ``solve_from``) to step through on that
board. Seed 7: Ann plays nine moves of a winning line, then ``7D b>5`` (shown ``7♦ b→5``, like every move of the page),
proven to lose the deal; Bob stops after two moves, still winnable."""

from __future__ import annotations

from browser_helpers import http_url, launched_browser, shot
from playwright.async_api import Page, expect
from race_helpers import play, seated_race, server_config
from redis.asyncio import Redis
from test_fairplay_analysis import FATAL, SEED, WINNING_PREFIX

from server.app import RaceServer
from server.services.analysis import AnalysisBudget, SolveFromLimits
from server.store import keys
from shared.protocol import AnalysisReady, RaceResult, RaceSettings

ANN_BOARD = '.side[data-slot="0"]'
FATAL_SHOWN = "7\N{BLACK DIAMOND SUIT} b\N{RIGHTWARDS ARROW}5"
"""``FATAL`` (``7D b>5``) as the page shows every move."""


async def step_to_the_end_of_the_line(page: Page) -> None:
    """Step through the shown line one move at a time (the page replays each on the board), then check the win."""
    view = page.locator(".line-view")
    total = await page.locator(".solution-line li").count()
    assert total > 0
    for step in range(1, total + 1):
        await page.click("button[data-action=line-step]")
        await expect(view).to_have_attribute("data-step", str(step))
    await expect(page.locator(f"{ANN_BOARD} .score strong")).to_have_text("52")
    await expect(page.locator(f'{ANN_BOARD} [data-pile="f"] [data-card="KS"]')).to_be_visible()


BULLET_GAPS = """(items) => items.map((item) => {
    const text = document.createRange();
    text.selectNodeContents(item);
    return Math.round(text.getClientRects()[0].left - item.getBoundingClientRect().left);
})"""
"""Per list item: how far right of the item's own left edge (where its outside bullet is drawn) its text starts."""


async def test_the_replay_marks_the_fatal_move_and_steps_through_a_winning_line_from_any_point(redis_url: str) -> None:
    async with Redis.from_url(redis_url) as redis:
        await redis.delete(keys.analysis_queue(), keys.solve_from_key("address", "127.0.0.1"))
    config = server_config(
        redis_url, analysis=True, analysis_budget=AnalysisBudget(seconds=30, signal_seconds=0.2, signal_solves=5),
        solve_from=SolveFromLimits(seconds=30),
    )  # fmt: skip
    async with RaceServer(config) as server:
        race = await seated_race(server.url, RaceSettings(seed=SEED))
        try:
            await play(race.ann, race.race_id, [*WINNING_PREFIX, FATAL])
            await play(race.bob, race.race_id, WINNING_PREFIX[:2])
            await race.ann.resign(race.race_id)
            await race.bob.resign(race.race_id)
            await race.ann.wait_for(RaceResult)
            await race.ann.wait_for(AnalysisReady, timeout=120)
        finally:
            await race.close()
        async with launched_browser() as browser:
            context = await browser.new_context(viewport={"width": 1400, "height": 1000})
            # The page resumes Ann's session, so the analysis speaks to her ("you").
            await context.add_init_script(f"localStorage.setItem('fg.token', {race.ann.token!r}); localStorage.setItem('fg.name', 'Ann');")
            page = await context.new_page()
            await page.goto(f"{http_url(server.url)}/replay/{race.race_id}")

            fatal = page.locator(".move-list li.fatal")
            await expect(fatal).to_have_count(1)
            await expect(fatal).to_have_attribute("data-slot", "0")
            await expect(fatal).to_have_attribute("data-seq", str(len(WINNING_PREFIX) + 1))
            # The analysis names the fatal move as the move list does: in symbols, never in the notation's ASCII.
            await expect(fatal.locator(".what")).to_have_text(FATAL_SHOWN)
            await expect(fatal.locator(".note")).to_contain_text(f"you lost the win here: {FATAL_SHOWN}")
            panel = page.locator(".analysis-panel")
            await expect(panel.locator('li[data-verdict="lost_at"]')).to_contain_text(f"lost the win at move {len(WINNING_PREFIX) + 1}: {FATAL_SHOWN}")
            assert FATAL not in await page.locator(".replay-page").inner_text()
            await expect(panel.locator('li[data-verdict="still_winnable"]')).to_contain_text("was still winnable when the attempt ended")
            await expect(page.locator(".move-list li.still-winnable .note")).to_contain_text("still winnable when Bob")
            await shot(page, "replay-analysis-01-fatal-move")

            # The analysis' own line from just before the fatal move.
            await fatal.locator("button[data-action=fatal-line]").click()
            await expect(page.locator(".counter")).to_have_attribute("data-position", str(len(WINNING_PREFIX)))
            await expect(page.locator(".line-view")).to_have_attribute("data-verdict", "solved")
            await expect(page.locator(".line-verdict")).to_contain_text("from the analysis")
            await step_to_the_end_of_the_line(page)
            await shot(page, "replay-analysis-02-line-won")
            await page.click("button[data-action=line-close]")
            await expect(page.locator(".line-view")).to_have_count(0)

            # Any other point: Ann's position after her fifth action, asked of the server's solver.
            await page.click('.move-list li[data-position="5"]')
            await page.click(f"{ANN_BOARD} button[data-action=solve-from]")
            await expect(page.locator(".line-view")).to_have_attribute("data-verdict", "solved", timeout=60_000)
            await expect(page.locator(".line-verdict")).to_contain_text("your position after 5 actions")
            await expect(page.locator(".line-verdict")).to_contain_text("from the server's solver")
            await expect(page.locator(f"{ANN_BOARD} .table")).to_have_class("table on-line")
            await step_to_the_end_of_the_line(page)
            await shot(page, "replay-analysis-03-line-from-move-5")

            # Stepping the replay drops the line; after the fatal move the solver proves the position lost.
            await page.click(f'.move-list li[data-position="{len(WINNING_PREFIX) + 1}"]')
            await expect(page.locator(".line-view")).to_have_count(0)
            await page.click(f"{ANN_BOARD} button[data-action=solve-from]")
            await expect(page.locator(".line-view")).to_have_attribute("data-verdict", "unsolvable", timeout=60_000)
            await expect(page.locator(".line-verdict")).to_contain_text("proved the position lost")
            await shot(page, "replay-analysis-04-lost")

            # The race page's result lists the analysis and leads to the replay.
            await page.goto(f"{http_url(server.url)}/race/{race.race_id}")
            result = page.locator(".result-overlay")
            await expect(result.locator('.analysis li[data-verdict="lost_at"]')).to_contain_text(f"lost the win at move {len(WINNING_PREFIX) + 1}: {FATAL_SHOWN}")
            await shot(page, "replay-analysis-05-race-result")
            # Each bullet sits by its text (the centred result once put the bullets at the far left of the panel).
            gaps = await result.locator(".analysis li").evaluate_all(BULLET_GAPS)
            assert gaps and all(gap < 8 for gap in gaps), f"the text of an analysis line starts {gaps} px right of its bullet"
            await result.locator(".analysis-hint a").click()
            await expect(page.locator(".move-list li.fatal")).to_have_count(1)
            await context.close()
