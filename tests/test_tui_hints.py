"""Hints, a casual race's setting: ``h`` in the app lights the next move of a winning line found by the shared solver
on the player's own board, its key plays it; a race without hints says so; a rated race with hints is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from lobby_helpers import refused
from player_helpers import new_handle, registered
from tui_helpers import SIZES, ann_in_the_app, save_screenshot, screen_text, send_keys, until
from winning_lines import WINNABLE_SEED

from client.words import words
from server.app import RaceServer
from shared import Board, move_label
from shared.assist import target_key
from shared.protocol import RaceSettings
from shared.solver import Budget, Verdict, solve

TEST_BUDGET = Budget(nodes=500_000)
"""A node budget alone: the same hint on a fast quiet machine and on a busy one."""


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x45"])
async def test_h_lights_the_next_move_of_a_winning_line_and_its_key_plays_it(
    race_server: RaceServer, tmp_path: Path, size: tuple[int, int]
) -> None:
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=WINNABLE_SEED, hints=True), size=size) as race:
        screen = race.screen
        screen.hint_budget = TEST_BUDGET
        assert screen.view.hints
        await race.start()
        send_keys(race.app, "h")
        await until(race.pilot, lambda: bool(screen.choices), what="the hint lit")
        (move,) = screen.choices
        assert screen.selected == move.card
        said = words("term.hint.move", move=move_label(move), target=target_key(move.target))
        assert said in screen.messages
        after = Board.deal(WINNABLE_SEED)
        after.push(move)
        assert solve(after, TEST_BUDGET).verdict is Verdict.SOLVED  # the hint keeps the deal winnable
        assert "hint" in screen_text(race.app)  # the footer offers h in this race
        save_screenshot(race.app, f"race-hint-{size[0]}x{size[1]}")
        send_keys(race.app, target_key(move.target))
        await until(race.pilot, lambda: len(screen.view.actions.get(screen.view.slot or 0, [])) == 1, what="the hinted move played")


async def test_h_in_a_race_without_hints_says_it_allows_none(race_server: RaceServer, tmp_path: Path) -> None:
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=WINNABLE_SEED)) as race:
        screen = race.screen
        await race.start()
        send_keys(race.app, "h")
        await until(race.pilot, lambda: words("term.hint.off") in screen.messages, what="the refusal")
        assert not screen.choices


async def test_a_rated_race_with_hints_is_refused_and_a_casual_one_shows_the_setting(race_server: RaceServer) -> None:
    handle = new_handle("hinter")
    ann = await registered(race_server.url, handle)
    try:
        with refused("bad_field"):
            await ann.create(RaceSettings(rated=True, hints=True))
        with refused("bad_field"):
            await ann.quick_match(RaceSettings(rated=True, hints=True))
        seated = await ann.create(RaceSettings(hints=True))
        assert seated.race.settings.hints
        await ann.leave(seated.race.race)
    finally:
        await ann.close()
