"""The web page says things in the same words as the terminal client: time limits (and the clock)."""

from __future__ import annotations

from browser_helpers import first_visit, http_url, launched_browser, shot
from playwright.async_api import expect
from race_helpers import player

from cli.lobby_command import entry_options
from client.race_view import clock_text, time_limit_words
from server.app import RaceServer
from shared.protocol import LobbyEntry, RaceSettings, RaceStatus


def test_the_terminal_writes_a_time_limit_as_a_clock_like_the_web_page() -> None:
    entry = LobbyEntry(race="r", creator="Ann", player="p", settings=RaceSettings(undo=True, time_limit=300), seats=1, status=RaceStatus.WAITING, created_at=0)
    assert entry_options(entry) == "classic, undo, time limit 5:00"
    assert time_limit_words(24 * 3600) == "time limit 24:00:00" and clock_text(3_725_000) == "1:02:05"


async def test_the_lobby_and_the_race_page_say_a_time_limit_in_the_terminals_words(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    try:
        seated = await ann.create(RaceSettings(time_limit=300))
        async with launched_browser() as browser:
            page = await browser.new_page()
            await first_visit(page, http_url(race_server.url) + "/", "Wes")
            row = page.locator(f'[data-race="{seated.race.race}"] .settings-text')
            await expect(row).to_contain_text(time_limit_words(300))
            await shot(page, "words-lobby-time-limit")
            assert "5:00 limit" not in await row.inner_text()
    finally:
        await ann.close()
