"""A rated race too short to count is aborted, rated for nobody (docs/PLAYERS.md "Ladder rules"): the page says so in
the result panel and on the player's history page, instead of showing a rated race without ratings, or "casual".

Screenshots land in tmp/artifacts/web/ (aborted-*.png).
"""

from __future__ import annotations

import json
from dataclasses import replace

from browser_helpers import http_url, launched_browser, shot
from player_helpers import booked, new_handle, rated_race, registered
from playwright.async_api import ViewportSize, expect
from race_helpers import OPEN_LADDER, server_config

from server.app import RaceServer

DESKTOP = ViewportSize(width=1280, height=800)


async def test_an_aborted_rated_race_says_not_rated_in_the_result_and_the_history(redis_url: str) -> None:
    ladder = replace(OPEN_LADDER, min_seconds=30)
    async with RaceServer(server_config(redis_url, ladder=ladder)) as server, launched_browser() as browser:
        ann_handle = new_handle("Ann")
        ann, bob = await registered(server.url, ann_handle), await registered(server.url, new_handle("Bob"))
        result = await rated_race(ann, bob)
        assert result.aborted == "too_short"
        await booked(server, result.race)
        history = await ann.history(ann_handle)
        assert history.items[0].aborted == "too_short", "the history line does not keep why the race was aborted"
        assert ann.session is not None
        session = {"fg.token": ann.session.token, "fg.name": ann_handle}
        await ann.close()

        context = await browser.new_context(viewport=DESKTOP)
        await context.add_init_script(f"for (const [k, v] of Object.entries({json.dumps(session)})) localStorage.setItem(k, v);")
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))

        await page.goto(f"{http_url(server.url)}/race/{result.race}")
        panel = page.locator(".result-overlay .result")
        await expect(panel.locator(".headline")).to_have_text("You win!")
        await expect(panel.locator(".aborted-line [data-aborted=too_short]")).to_have_text("aborted: not rated")
        await expect(panel.locator(".aborted-line")).to_contain_text("ended too soon after its start")
        await shot(page, "aborted-01-result")

        await page.goto(f"{http_url(server.url)}/player/{ann_handle}")
        row = page.locator(f".history-row[data-race={result.race}]")
        await expect(row.locator("[data-aborted=too_short]")).to_have_text("aborted: not rated")
        await expect(row.locator(".meta")).not_to_contain_text("casual")
        await shot(page, "aborted-02-history")
        assert errors == []
