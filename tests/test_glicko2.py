"""Glicko-2 against Glickman's published worked example, and how deviations age."""

from __future__ import annotations

import pytest

from shared.glicko2 import DEFAULT_DEVIATION, Game, Rating, aged, update


def test_the_papers_worked_example_gives_its_published_rating_deviation_and_volatility() -> None:
    player = Rating(1500, 200, 0.06)
    games = [Game(Rating(1400, 30), 1), Game(Rating(1550, 100), 0), Game(Rating(1700, 300), 0)]
    after = update(player, games)
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.deviation == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=0.00001)


def test_a_win_raises_and_a_loss_lowers_the_rating_and_both_shrink_the_deviation() -> None:
    player, opponent = Rating(), Rating()
    won, lost, drawn = (update(player, [Game(opponent, score)]) for score in (1.0, 0.0, 0.5))
    assert won.rating > player.rating > lost.rating
    assert drawn.rating == pytest.approx(player.rating)
    assert max(won.deviation, lost.deviation, drawn.deviation) < player.deviation


def test_the_deviation_grows_with_idle_periods_up_to_a_new_players() -> None:
    settled = Rating(1600, 60, 0.06)
    assert aged(settled, 0) == settled
    assert 60 < aged(settled, 10).deviation < aged(settled, 100).deviation
    assert aged(settled, 10**9).deviation == DEFAULT_DEVIATION
    assert update(settled, []).deviation == pytest.approx(aged(settled, 1).deviation)
