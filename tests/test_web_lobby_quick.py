"""The lobby's quick-pairing grid and its "N online, M racing" line, in a real headless Chromium against a real
server: a cell pairs only players who picked the same profile and time limit, and the line counts the players of
every connection. Screenshots land in tmp/artifacts/web/ (lobby-quick-*.png)."""

from __future__ import annotations

from browser_helpers import first_visit, http_url, launched_browser, shot
from lobby_helpers import refused
from playwright.async_api import ViewportSize, expect
from race_helpers import player, server_config

from server.app import RaceServer
from server.store import keys
from shared.protocol import Queued, RaceSettings, Seated

DESKTOP = ViewportSize(width=1366, height=768)


async def test_a_grid_cell_pairs_only_the_same_cell_and_the_lobby_counts_who_is_online_and_racing(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url)) as server, launched_browser() as browser:
        assert server.redis is not None
        await server.redis.delete(keys.ONLINE)  # earlier tests' servers on this Redis stop counting at once
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await first_visit(page, http_url(server.url) + "/", "Ann")
        bob = await player(server.url, "Bob")
        cid = await player(server.url, "Cid")
        try:
            line = page.locator(".online-count")
            await expect(line).to_have_text("3 players online · 0 racing", timeout=20_000)
            cells = page.locator(".quick-grid .quick-cell")
            await expect(cells).to_have_count(6)
            await shot(page, "lobby-quick-grid")

            await page.click(".quick-cell[data-profile=classic][data-minutes='5']")
            await expect(page.locator(".overlay.waiting")).to_be_visible()
            other_cell = await bob.quick_match(RaceSettings(profile="classic", time_limit=180))
            assert isinstance(other_cell, Queued), "3 min was paired with 5 min"
            same_cell = await cid.quick_match(RaceSettings(profile="classic", time_limit=300))
            assert isinstance(same_cell, Seated) and same_cell.race.settings.time_limit == 300
            await expect(page.locator(".race-settings")).to_contain_text("5:00")
            await bob.cancel_quick_match()  # still queued: nobody picked his cell
            with refused("not_queued"):
                await cid.cancel_quick_match()

            await page.goto(http_url(server.url) + "/")
            await expect(line).to_have_text("3 players online · 2 racing", timeout=20_000)
            assert await line.get_attribute("data-racing") == "2"
            assert not errors, errors
        finally:
            await bob.close()
            await cid.close()
