"""The full-screen race app driven headless by Textual's Pilot against a real server (real Redis) and a second client."""

from __future__ import annotations

from pathlib import Path

import pytest
from race_helpers import player
from tui_helpers import (
    SIZES,
    ann_in_the_app,
    message_text,
    own_actions,
    result_text,
    save_screenshot,
    send_keys,
    shown,
    type_move,
    until,
)
from winning_lines import winning_deal

from cli.tui.board import BoardWidget
from cli.tui.dialogs import ResultScreen
from cli.tui.spectate_screens import ReplayScreen
from server.app import RaceServer
from shared import Board, parse_action
from shared.assist import destinations
from shared.protocol import Emote, RaceResult, RaceSettings, Seated, Started

ON_BOTH_SIZES = pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x45"])


def several_destination_moves(seed: int, line: tuple[str, ...]) -> list[int]:
    """Indexes of the moves of ``line`` whose card has more than one legal destination when it is played."""
    board, found = Board.deal(seed), []
    for index, text in enumerate(line):
        action = parse_action(text)
        if len(destinations(board, action.card)) > 1:  # type: ignore[union-attr]
            found.append(index)
        board.play(action)
    return found


@ON_BOTH_SIZES
async def test_a_race_is_typed_card_by_card_to_the_result_and_a_rematch(race_server: RaceServer, tmp_path: Path, size: tuple[int, int]) -> None:
    seed, line = winning_deal()
    assert several_destination_moves(seed, line), "the test needs a move with several destinations"
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=seed), size=size) as race:
        app, pilot, screen, bob = race.app, race.pilot, race.screen, race.bob
        save_screenshot(app, "race-waiting")
        await race.start()
        assert "Bob" in str(screen.query_one("#opponent").render())

        await pilot.press("u")  # undo is not allowed in this race: the footer does not offer it, the key says why
        await until(pilot, lambda: "no undo" in message_text(screen))
        assert message_text(screen) == "This race has no undo." and "undo_not_allowed" not in message_text(screen)

        lit = []
        for index, move in enumerate(line):
            if index == 20:
                await bob.move(screen.view.race_id, "3S b>5")  # the opponent's progress reaches the screen
            if move == line[several_destination_moves(seed, line)[0]]:
                card = move.split()[0].lower()
                await pilot.press(*card)
                await until(pilot, lambda: bool(screen.choices))
                lit = [move_choice.target for move_choice in screen.choices]
                assert "Esc cancels" in str(screen.query_one("#entry").render())
                save_screenshot(app, "race-destinations-lit")
                await pilot.press("escape")
                assert not screen.choices
            lit_now = await type_move(pilot, move)
            if index in several_destination_moves(seed, line):
                assert lit_now
            else:
                assert not lit_now  # one legal destination: the card moved at once
        assert len(lit) > 1
        await until(pilot, lambda: bool(result_text(app)), what="the result screen")
        assert result_text(app) == "You win: cleared first."
        standings = result_text(app, "standings")
        assert "Ann (guest, you)" in standings and "52/52  cleared the board" in standings and "Bob (guest)" in standings
        save_screenshot(app, "race-result")
        result = await bob.wait_for(RaceResult)
        assert result.winner == 0

        first_race = screen.view.race_id
        await pilot.press("r")
        await until(pilot, lambda: "Rematch offered" in result_text(app, "note"))
        seated = await bob.rematch(first_race)
        assert isinstance(seated, Seated)
        await until(pilot, lambda: not isinstance(app.screen, ResultScreen) and screen.view.race_id != first_race)
        assert screen.view.race_id == seated.race.race
        await bob.wait_for(Started)
        await until(pilot, lambda: screen.view.status == "running")
        board = screen.query_one("#board", BoardWidget)
        await pilot.pause()  # the frame with the new board is on screen: clicks hit what is drawn
        assert board.board is not None and board.board.foundation_count == 0


@ON_BOTH_SIZES
async def test_the_race_screen_draws_the_table_and_the_opponents_progress(race_server: RaceServer, tmp_path: Path, size: tuple[int, int]) -> None:
    seed, line = winning_deal()
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=seed, time_limit=600, undo=True), size=size) as race:
        app, pilot, screen, bob = race.app, race.pilot, race.screen, race.bob
        await race.start()
        await bob.emote(screen.view.race_id, Emote.GOOD_LUCK)  # a quick emote lands in the message log, in words
        await until(pilot, lambda: "Bob (guest): Good luck!" in screen.messages, what="the opponent's emote")
        for move in line[:6]:
            await type_move(pilot, move)
        await bob.move(screen.view.race_id, line[0])
        await until(pilot, lambda: "1/52" in str(screen.query_one("#opponent").render()))
        status = str(screen.query_one("#race-status").render())
        assert "time left 9:" in status and "clock 0:" in status and "0 watching" in status
        markup = screen.query_one("#board", BoardWidget).markup()
        assert " Foundations " in markup and "Bouquet" in str(screen.query_one("#bouquet").render())
        board = screen.view.board
        assert board is not None and board.foundation_count == 5
        save_screenshot(app, "race-running")
        await pilot.press("u")  # undo allowed here: the last move is taken back
        await until(pilot, lambda: screen.view.board is not None and screen.view.board.undos == 1)
        await pilot.press("g")
        await until(pilot, lambda: "Resign this race?" in " ".join(str(w.render()) for w in app.screen.query("Static")))
        save_screenshot(app, "race-confirm-resign")
        await pilot.press("y")
        await until(pilot, lambda: screen.view.me is not None and not screen.view.me.playing)
        assert screen.view.me is not None and screen.view.me.state == "resigned"

        watcher = await player(race.bob.url or "", "Cid")
        await watcher.watch(screen.view.race_id)
        await until(pilot, lambda: "1 watching" in str(screen.query_one("#race-status").render()), what="the watcher count")
        await watcher.close()
        await bob.resign(screen.view.race_id)
        await until(pilot, lambda: bool(result_text(app)), what="the result screen")
        assert result_text(app) == "You win: more cards on foundations (5 to 1)."
        await pilot.press("p")  # the result's replay key: this race, event by event
        replay = await shown(pilot, ReplayScreen, "the replay")
        assert replay.view.race_id == screen.view.race_id
        await pilot.press("end")
        assert replay.view.result is not None and replay.view.boards[0].undos == 1


FRESH_DEAL_15 = """Ann (you)
 Foundations   ♣-  ♦-  ♥-  ♠-    0/52

  1    2    3    4    5    6
 4♣   Q♦   8♥   7♦   8♦   Q♥
 A♣   3♦   8♠   5♦   K♦   A♦
 J♦   9♠   J♥   5♣   3♣   6♠
 6♣   7♠   A♥   K♥   3♥   Q♣
 T♥   J♠   2♦   2♥   8♣   4♥
 5♥   6♦   J♣   K♠   4♠   7♥

Bouquet  2♣ 7♣ 9♣ T♣ K♣
         4♦ 9♦ T♦
         6♥ 9♥
         A♠ 2♠ 3♠ 5♠ T♠ Q♠"""
"""The table of seed 15 as drawn (text only): columns as columns, the bouquet sorted by suit and rank."""


def test_the_table_draws_columns_as_columns_and_the_bouquet_by_suit_and_rank() -> None:
    from textual.content import Content

    widget = BoardWidget(interactive=True)
    widget.board, widget.title = Board.deal(15), "Ann (you)"
    drawn = Content.from_markup(widget.markup()).plain
    assert "\n".join(line.rstrip() for line in drawn.splitlines()) == FRESH_DEAL_15
    assert "@click=screen.pick_card(" in widget.markup()  # every available card is a click target


@ON_BOTH_SIZES
async def test_clicks_pick_a_card_and_a_destination_and_auto_move_sends_safe_cards_home(race_server: RaceServer, tmp_path: Path, size: tuple[int, int]) -> None:
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15), auto=True, size=size) as race:
        app, pilot, screen = race.app, race.pilot, race.screen
        await race.start()
        await until(pilot, lambda: own_actions(screen) == ["AS b>f"], what="the ace of spades sent home by auto-move")
        await pilot.press("o")  # auto-move off: 2S stays where it is from now on
        board = screen.query_one("#board", BoardWidget)
        await pilot.pause()  # the frame with the new board is on screen: clicks hit what is drawn
        # rows: title, foundations, blank, column numbers, then the cards; a column is 5 cells wide after 2 cells
        await pilot.click(board, offset=(2 + 4 * 5, 4 + 5))  # 4♠, the last card of column 5: one destination
        await until(pilot, lambda: len(own_actions(screen)) == 2, what="4S 5>1 played by a click")
        assert own_actions(screen)[1] == "4S 5>1"
        send_keys(app, "2", "s")  # 2♠ alone: foundation only
        await until(pilot, lambda: len(own_actions(screen)) == 3)
        send_keys(app, "3", "s")  # 3♠: the foundation or onto 4♠ in column 1
        await until(pilot, lambda: len(screen.choices) == 2)
        await pilot.pause()
        await pilot.click(board, offset=(2, 3))  # the header of column 1
        await until(pilot, lambda: len(own_actions(screen)) == 4)
        assert own_actions(screen)[2:] == ["2S b>f", "3S b>1"]

