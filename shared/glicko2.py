"""Glicko-2 ratings (Mark Glickman, "Example of the Glicko-2 system", 2013): pure functions, no I/O.

Why written here: the package index's ``glicko2`` (2.1.0) is a mutable, untyped ``Player`` class with the
paper's first (Newton) volatility iteration, ``glicko2-py`` (0.1.0) is a new one-release package; neither is
typed or tested against the paper. This module follows the paper's steps 1-8 with the Illinois algorithm of
step 5, and tests/test_glicko2.py checks it against the paper's worked example.

A rating is kept on the Glicko scale (1500 / 350 for a new player); the race server treats every rated race
as one rating period with one game, and lets the deviation grow with the player's inactivity before it
(:func:`aged`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

SCALE: Final = 173.7178
"""Glicko-2's conversion factor between the Glicko scale and the internal one (400 / ln 10)."""
DEFAULT_RATING: Final = 1500.0
DEFAULT_DEVIATION: Final = 350.0
DEFAULT_VOLATILITY: Final = 0.06
TAU: Final = 0.5
"""The system constant: how much the volatility may change per period (the paper suggests 0.3 to 1.2)."""
CONVERGENCE: Final = 1e-6
"""The tolerance of the volatility iteration (the paper's epsilon)."""


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating, rating deviation (both on the Glicko scale) and volatility."""

    rating: float = DEFAULT_RATING
    deviation: float = DEFAULT_DEVIATION
    volatility: float = DEFAULT_VOLATILITY


@dataclass(frozen=True, slots=True)
class Game:
    """One game of a rating period: the opponent's rating before the period and the score (1 win, 0.5 draw, 0 loss)."""

    opponent: Rating
    score: float


def _g(phi: float) -> float:
    return 1 / math.sqrt(1 + 3 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1 / (1 + math.exp(-_g(phi_j) * (mu - mu_j)))


def _new_volatility(sigma: float, phi: float, v: float, delta: float, tau: float) -> float:
    """Step 5: the new volatility by the Illinois algorithm."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2 * (phi * phi + v + ex) ** 2) - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > CONVERGENCE:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2)


def update(player: Rating, games: Sequence[Game], *, tau: float = TAU) -> Rating:
    """The player's rating after one rating period with ``games`` (steps 1-8 of the paper).

    Without games only the deviation grows (step 6), by one period of the player's volatility.
    """
    mu = (player.rating - DEFAULT_RATING) / SCALE
    phi = player.deviation / SCALE
    if not games:
        return Rating(player.rating, min(DEFAULT_DEVIATION, math.sqrt(phi * phi + player.volatility**2) * SCALE), player.volatility)
    terms = []
    for game in games:
        mu_j = (game.opponent.rating - DEFAULT_RATING) / SCALE
        phi_j = game.opponent.deviation / SCALE
        terms.append((_g(phi_j), _expected(mu, mu_j, phi_j), game.score))
    v = 1 / sum(g * g * e * (1 - e) for g, e, _ in terms)
    delta = v * sum(g * (score - e) for g, e, score in terms)
    sigma = _new_volatility(player.volatility, phi, v, delta, tau)
    phi_star = math.sqrt(phi * phi + sigma * sigma)
    new_phi = 1 / math.sqrt(1 / (phi_star * phi_star) + 1 / v)
    new_mu = mu + new_phi * new_phi * sum(g * (score - e) for g, e, score in terms)
    return Rating(new_mu * SCALE + DEFAULT_RATING, new_phi * SCALE, sigma)


def aged(player: Rating, idle_periods: float) -> Rating:
    """The rating after ``idle_periods`` rating periods without games: the deviation grows as sqrt(phi² + n σ²),
    never past a new player's (350), so a rating nobody has defended for long counts as uncertain again."""
    if idle_periods <= 0:
        return player
    phi = player.deviation / SCALE
    grown = math.sqrt(phi * phi + idle_periods * player.volatility**2) * SCALE
    return Rating(player.rating, min(DEFAULT_DEVIATION, grown), player.volatility)
