"""Post-race analysis names the move after which a player's position stopped being winnable."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.main import main
from shared import Board, Rules, action_text, parse_action
from shared.solver import Budget, SolveResult, Verdict, solve
from shared.solver.analysis import LineVerdict, analyse_line, line_positions, winning_line
from shared.solver.difficulty import EASY_MAX_NODES, MEDIUM_MAX_NODES, WINNABLE_TIERS, Difficulty, difficulty_of

BUDGET = Budget(nodes=200_000)
SEED = 7
WINNING_PREFIX = ["AD b>f", "AS b>f", "JD 5>4", "9C 5>1", "AC 5>f", "2C 2>f", "TD b>4", "9D 2>4", "6S 5>2"]
"""The first nine moves of a winning line of seed 7; after them ``7D b>5`` is proven to lose the deal."""
FATAL = "7D b>5"


def _play_on(actions: list[str], count: int) -> list[str]:
    """``actions`` followed by ``count`` more legal moves (the first legal move each time)."""
    board = Board.deal(SEED)
    for text in actions:
        board.play(parse_action(text))
    more = list(actions)
    for _ in range(count):
        legal = board.legal_moves()
        if not legal:
            break
        board.push(legal[0])
        more.append(action_text(legal[0]))
    return more


def test_the_constructed_fatal_move_loses_a_winnable_position() -> None:
    before = line_positions(SEED, Rules(), WINNING_PREFIX)[-1].board
    after = line_positions(SEED, Rules(), [*WINNING_PREFIX, FATAL])[-1].board
    assert solve(before, BUDGET).verdict is Verdict.SOLVED
    assert solve(after, BUDGET).verdict is Verdict.UNSOLVABLE


def test_analysis_names_the_move_that_lost_the_win() -> None:
    actions = _play_on([*WINNING_PREFIX, FATAL], 6)
    analysis = analyse_line(SEED, Rules(), actions, BUDGET)
    assert analysis.verdict is LineVerdict.LOST_AT
    assert analysis.fatal_action == len(WINNING_PREFIX)
    assert analysis.fatal_move == FATAL
    board = line_positions(SEED, Rules(), WINNING_PREFIX)[-1].board
    for text in analysis.continuation:
        board.play(parse_action(text))
    assert board.is_won()


def test_undone_moves_are_not_part_of_the_line() -> None:
    rules = Rules(undo=True)
    board = line_positions(SEED, rules, WINNING_PREFIX)[-1].board
    other = next(move for move in board.legal_moves() if action_text(move) != FATAL)
    actions = [*WINNING_PREFIX, FATAL, "undo", action_text(other)]
    positions = line_positions(SEED, rules, actions)
    assert [p.action_index for p in positions] == [-1, *range(len(WINNING_PREFIX)), len(actions) - 1]


def test_a_position_still_winnable_when_the_player_stopped_gets_a_continuation() -> None:
    analysis = analyse_line(SEED, Rules(), WINNING_PREFIX, BUDGET)
    assert analysis.verdict is LineVerdict.STILL_WINNABLE
    board = line_positions(SEED, Rules(), WINNING_PREFIX)[-1].board
    for text in analysis.continuation:
        board.play(parse_action(text))
    assert board.is_won()


def test_a_winning_line_from_the_start_replays_to_a_win() -> None:
    verdict, line = winning_line(SEED, Rules(), BUDGET)
    assert verdict is Verdict.SOLVED
    assert analyse_line(SEED, Rules(), line, BUDGET).verdict is LineVerdict.WON


def test_a_deal_is_tiered_by_the_positions_its_first_win_took() -> None:
    assert difficulty_of(SolveResult(Verdict.SOLVED, nodes=EASY_MAX_NODES)) is Difficulty.EASY
    assert difficulty_of(SolveResult(Verdict.SOLVED, nodes=EASY_MAX_NODES + 1)) is Difficulty.MEDIUM
    assert difficulty_of(SolveResult(Verdict.SOLVED, nodes=MEDIUM_MAX_NODES + 1)) is Difficulty.HARD
    assert difficulty_of(SolveResult(Verdict.UNSOLVABLE, nodes=5)) is Difficulty.UNWINNABLE
    assert difficulty_of(SolveResult(Verdict.UNKNOWN, nodes=5)) is Difficulty.UNKNOWN
    assert difficulty_of(solve(Board.deal(SEED), BUDGET)) in WINNABLE_TIERS


def test_analyse_names_a_missing_file_instead_of_asking_a_server_for_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """RACE|FILE: a path to no file is a usage error, not a race id sent to a server (which may not even run)."""
    missing = tmp_path / "race.json"
    for extra in ([], ["--from", "3"]):
        assert main(["analyse", str(missing), "--server", "ws://127.0.0.1:1", *extra]) == 2
        assert f"cannot read {missing}: not a file" in capsys.readouterr().err
