"""The arena's rules (shared/arena.py): points with streaks and berserk, the standings' tie-break, the pairing."""

from __future__ import annotations

from shared.arena import ArenaGame, FreePlayer, choose_pairs, on_fire, score, standings
from shared.protocol import Outcome

W, D, L = Outcome.WON, Outcome.DRAW, Outcome.LOST


def games(*outcomes: Outcome, berserk: bool = False, moves: int = 20, rating: float = 1500.0) -> list[ArenaGame]:
    return [ArenaGame(f"r{number}", "x", outcome, berserk, moves, rating) for number, outcome in enumerate(outcomes)]


def test_results_count_double_after_two_wins_in_a_row_until_a_race_is_not_won() -> None:
    assert score(games(W, W)) == 4
    assert score(games(W, W, W)) == 4 + 4
    assert score(games(W, W, D)) == 4 + 2  # a draw on fire counts double too, and ends the streak
    assert score(games(W, W, D, W)) == 4 + 2 + 2
    assert score(games(W, W, L, W, W, W)) == 4 + 0 + 4 + 4
    assert on_fire(games(L, W, W)) and not on_fire(games(W, W, L)) and not on_fire(games(W))


def test_a_berserk_win_earns_one_point_more_with_at_least_seven_moves() -> None:
    assert score(games(W, berserk=True, moves=7)) == 3
    assert score(games(W, berserk=True, moves=6)) == 2
    assert score(games(L, berserk=True, moves=30)) == 0
    assert score(games(W, W, W, berserk=True)) == 3 + 3 + 5  # the bonus is not doubled


def test_ties_are_broken_by_the_average_rating_of_the_opponents_beaten() -> None:
    table = standings({"ann": games(W, L, rating=1400), "bob": games(L, W, rating=1700), "cat": games(D, D)})
    assert [(line.player, line.score) for line in table] == [("bob", 2), ("ann", 2), ("cat", 2)]
    assert table[0].performance == 1700 and table[2].performance == 0


def test_pairs_join_the_closest_scores_but_not_the_last_opponent_while_another_is_free() -> None:
    free = [FreePlayer("ann", 6, 1500, "bob"), FreePlayer("bob", 6, 1500, "ann"), FreePlayer("cat", 2, 1600, None), FreePlayer("dan", 0, 1400, None)]
    assert choose_pairs(free) == [("ann", "cat"), ("bob", "dan")]
    assert choose_pairs(free[:2]) == [("ann", "bob")]  # nobody else is free: the same pair again
    assert choose_pairs(free[2:3]) == []
