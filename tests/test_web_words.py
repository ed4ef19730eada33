"""The web page says things in the same words as the terminal client: time limits (and the clock), refused moves,
a watched race that started or finished within the spectator delay."""

from __future__ import annotations

import re

from browser_helpers import create_race, first_visit, http_url, launched_browser, shot
from playwright.async_api import Page, expect
from race_helpers import Race, play, player, seated_race
from winning_lines import winning_deal

from cli.tui.texts import entry_options
from client import RaceClient
from client.race_session import refusal_text
from client.race_view import clock_text, time_limit_words, watched_status_words
from client.refusals import refusal_words
from server.app import RaceServer
from shared import Board, card_text, rank_of
from shared.moves import FOUNDATION, Move
from shared.protocol import Error, LobbyEntry, RaceResult, RaceSettings, RaceStatus, Started


async def racing_bob(page: Page, url: str) -> RaceClient:
    """Ann on the page creates a race of seed 15 and Bob (a client) joins it: both see it running. Bob is returned."""
    await first_visit(page, http_url(url) + "/", "Ann")
    race = await create_race(page, seed=15)
    bob = await player(url, "Bob")
    try:
        await bob.join(race)
        await bob.wait_for(Started)
        await expect(page.locator(".race-page [data-status=running]")).to_be_visible()
    except BaseException:
        await bob.close()
        raise
    return bob


async def delayed_race_under_way(url: str) -> Race:
    """Ann and Bob race with a 600 s spectator delay, Ann three moves in: a spectator's snapshot is the empty race."""
    seed, line = winning_deal()
    race = await seated_race(url, RaceSettings(seed=seed, spectator_delay=600))
    try:
        await play(race.ann, race.race_id, line[:3])
    except BaseException:
        await race.close()
        raise
    return race


async def finish(race: Race) -> None:
    """Both resign: the race has its result."""
    await race.ann.resign(race.race_id)
    await race.bob.resign(race.race_id)
    await race.ann.wait_for(RaceResult)


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


async def test_a_refused_move_is_said_in_words_with_the_cards_of_the_move_list_and_its_code_only_in_the_title(race_server: RaceServer) -> None:
    board = Board.deal(15)
    card, source = next((card, source) for card, source in board.available() if 1 < rank_of(card) < 10)  # no ace, no 10 ("T")
    move = Move(card, source, FOUNDATION)
    refusal = board.check_move(move)
    assert refusal is not None
    terminal = refusal_text(Error(id=0, code=refusal.code.value, message=refusal.message), move, board)
    async with launched_browser() as browser:
        page = await browser.new_page()
        bob = await racing_bob(page, race_server.url)
        try:
            await page.click(f'.race-page .board [data-card="{card_text(card)}"]')
            await page.click('.race-page .board [data-pile="f"]')
            notice = page.locator(".notice .refusal")
            await expect(notice).to_have_text(terminal)  # "Refused: 8♠ can't go to its foundation: the 7♠ isn't there yet."
            await expect(notice).to_have_attribute("data-code", "not_next_on_foundation")
            assert "not_next_on_foundation" in (await notice.get_attribute("title") or "")
            assert ">" not in await notice.inner_text()  # not the notation (8S 2>f)
            await shot(page, "words-refused-move")
        finally:
            await bob.close()


async def test_the_watch_page_says_a_race_is_under_way_or_finished_within_the_delay_showing_none_of_it(race_server: RaceServer) -> None:
    """A 600 s delay: the delayed view is the race before anyone joined. The page said "waiting for an opponent"; now it
    says what is true (under way / finished, shown 600 s late) and still shows no card, move or result."""
    race = await delayed_race_under_way(race_server.url)
    try:
        async with launched_browser() as browser:
            page = await browser.new_page()
            await first_visit(page, http_url(race_server.url) + "/", "Eve")
            status = page.locator(".watch-page .race-title [data-status]")
            for now, words in [(RaceStatus.RUNNING, "The race is under way: you see it 600 s late."), (RaceStatus.FINISHED, "The race is over")]:
                if now is RaceStatus.FINISHED:
                    await finish(race)
                await page.goto(http_url(race_server.url) + f"/watch/{race.race_id}")
                await expect(status).to_have_text(watched_status_words(RaceStatus.WAITING, now, 600_000))
                await expect(status).to_have_class(re.compile(rf"\bstatus-{now.value}\b"))  # its colour: the race's now
                await expect(page.locator(".watch-page .lag-note")).to_contain_text(words)
                # the boards do not say the cards come "when the race starts": it has started
                await expect(page.locator(".watch-page .board-empty").first).to_have_text("The cards were dealt: they show here 600 s after the start.")
                await shot(page, f"words-watch-delayed-{now.value}")
                assert await page.locator(".watch-page .card").count() == 0 and await page.locator(".watch-page .result").count() == 0
                assert "waiting for an opponent" not in await page.locator(".watch-page").inner_text()
            await expect(page.locator(".watch-page a", has_text="Replay it now")).to_have_attribute("href", f"/replay/{race.race_id}")
    finally:
        await race.close()


NON_MOVE_CODES = ["not_finished", "race_closed", "already_started", "unknown_race", "not_queued", "seed_pool_empty", "race_over", "attempt_over", "not_started", "server_busy", "overloaded", "invite_required"]
"""Codes the actions that are no move (resign, stuck, rematch, leave, cancel, login) are refused with (docs/PROTOCOL.md)."""


async def test_a_refused_rematch_is_said_in_the_terminals_words_with_its_code_only_in_the_title(race_server: RaceServer) -> None:
    """The page said the server's message and its code ('... (not_finished)') for a refused resign, stuck or rematch;
    now the words of the same mapping as the terminal's, for every code those actions are refused with."""
    terminal = refusal_text(Error(id=0, code="not_finished", message="the race has no result yet"))
    assert "not_finished" not in terminal
    async with launched_browser() as browser:
        page = await browser.new_page()
        bob = await racing_bob(page, race_server.url)
        try:
            await page.evaluate("window.flowerGarden.view.action('rematch')")  # the server refuses: no result yet
            notice = page.locator(".notice .refusal")
            await expect(notice).to_have_text(terminal)
            await expect(notice).to_have_attribute("data-code", "not_finished")
            assert "not_finished" in (await notice.get_attribute("title") or "")
            await shot(page, "words-refused-rematch")
            script = await page.evaluate("document.documentElement.dataset.static + 'js/refusals.js'")
            web = await page.evaluate("async ([url, codes]) => { const m = await import(url); return codes.map((code) => m.refusalWords(code)); }", [script, NON_MOVE_CODES])
            assert web == [refusal_words(code) for code in NON_MOVE_CODES] and None not in web
        finally:
            await bob.close()


async def test_the_watch_page_says_a_race_ended_while_it_was_away_once_it_reconnects(race_server: RaceServer) -> None:
    """A 600 s delay hides the result from the events: only a watching reply's status_now tells the race ended. The
    page kept the first reply's ('under way') after re-watching on a new connection; now it takes the new reply's."""
    race = await delayed_race_under_way(race_server.url)
    try:
        async with launched_browser() as browser:
            page = await browser.new_page()
            await first_visit(page, http_url(race_server.url) + "/", "Eve")
            await page.goto(http_url(race_server.url) + f"/watch/{race.race_id}")
            status = page.locator(".watch-page .race-title [data-status]")
            await expect(status).to_have_text(watched_status_words(RaceStatus.WAITING, RaceStatus.RUNNING, 600_000))
            await finish(race)
            await expect(status).to_have_text(watched_status_words(RaceStatus.WAITING, RaceStatus.RUNNING, 600_000))  # no event says so
            await page.evaluate("window.flowerGarden.conn.socket.close(4000, 'test drop')")
            await expect(status).to_have_text(watched_status_words(RaceStatus.WAITING, RaceStatus.FINISHED, 600_000))
            await expect(page.locator(".watch-page a", has_text="Replay it now")).to_have_attribute("href", f"/replay/{race.race_id}")
            assert await page.locator(".watch-page .card").count() == 0
    finally:
        await race.close()
