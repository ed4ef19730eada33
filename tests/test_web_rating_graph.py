"""The player page's rating graph, in a real headless Chromium against a real server keeping its records in Redis
and in PostgreSQL: after two rated wins the page draws the classic rating as an SVG line of three points (the
start and after each race) named in words, with the same points in a table. Screenshots land in tmp/artifacts/web/
(rating-graph-*.png)."""

from __future__ import annotations

from browser_helpers import http_url, launched_browser, shot
from conftest import ON_BOTH_RECORDS
from player_helpers import PASSWORD, booked, new_handle, rated_race, registered
from playwright.async_api import ViewportSize, expect
from race_helpers import player

from server.app import RaceServer

DESKTOP = ViewportSize(width=1366, height=768)


@ON_BOTH_RECORDS
async def test_two_rated_wins_draw_a_graph_of_three_points_with_a_table_of_them(race_server: RaceServer, records_kind: str) -> None:
    ann_handle, bob_handle = new_handle("Ann"), new_handle("Bob")
    ann = await registered(race_server.url, ann_handle)
    await (await registered(race_server.url, bob_handle)).close()
    afters: list[int] = []
    try:
        for _ in range(2):
            bob = await player(race_server.url, bob_handle)
            await bob.login(bob_handle, PASSWORD)
            result = await rated_race(ann, bob)
            await booked(race_server, result.race)
            rating = next(line.rating for line in result.players if line.account == ann_handle)
            assert rating is not None
            afters.append(rating.after)
        async with launched_browser() as browser:
            page = await (await browser.new_context(viewport=DESKTOP)).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(http_url(race_server.url) + f"/player/{ann_handle}")
            name_form = page.locator("form.name-form")
            if await name_form.count():
                await page.fill("input[name=name]", "Eve")
                await page.click("form.name-form button[type=submit]")
            graph = page.locator("svg.rating-graph[data-profile=classic]")
            await expect(graph).to_have_attribute("data-points", "3")
            assert await graph.locator("circle.point").count() == 3
            label = await graph.get_attribute("aria-label")
            assert label == f"classic rating: 1,500 to {afters[-1]:,} over 2 races", label  # the text alternative
            await page.click(".rating-points summary")
            rows = page.locator(".rating-table[data-profile=classic] tbody tr")
            await expect(rows).to_have_count(2)
            assert [await rows.nth(index).locator("td").nth(2).inner_text() for index in range(2)] == [str(afters[1]), str(afters[0])]
            await shot(page, f"rating-graph-{records_kind}")
            assert not errors, errors
    finally:
        await ann.close()
