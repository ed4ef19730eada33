"""Arena tournaments' rules (pure): the points of each race with streaks and berserk, the standings' order with its
tie-break, and who is paired with whom among the free players.

Scoring as lichess's arenas: a win 2, a draw 1, a loss 0; after two wins in a row every further result counts double
until a race is not won (the player is "on fire"); a player who went berserk (half the time limit) and won with at
least :data:`BERSERK_MIN_MOVES` moves gets one point more (not doubled). Ties are broken by performance: the average
rating of the opponents beaten (docs/COMMUNITY.md "Arena tournaments").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from shared.protocol.states import Outcome

BASE_POINTS: Final = {Outcome.WON: 2, Outcome.DRAW: 1, Outcome.LOST: 0}
BERSERK_MIN_MOVES: Final = 7
"""A berserk win earns its extra point only with at least this many moves (no berserk bonus for a walkover)."""
STREAK_WINS: Final = 2
"""Wins in a row after which results count double."""


@dataclass(frozen=True, slots=True)
class ArenaGame:
    """One finished race of a player in the arena, from that player's side."""

    race: str
    opponent: str
    outcome: Outcome
    berserk: bool
    moves: int
    opponent_rating: float


def game_points(previous: Sequence[ArenaGame], game: ArenaGame) -> int:
    """The points ``game`` earns after the player's ``previous`` games."""
    points = BASE_POINTS[game.outcome] * (2 if on_fire(previous) else 1)
    if game.outcome is Outcome.WON and game.berserk and game.moves >= BERSERK_MIN_MOVES:
        points += 1
    return points


def on_fire(games: Sequence[ArenaGame]) -> bool:
    """Whether the player's last :data:`STREAK_WINS` games (at least) were all won: its next result counts double."""
    return len(games) >= STREAK_WINS and all(game.outcome is Outcome.WON for game in games[-STREAK_WINS:])


def score(games: Sequence[ArenaGame]) -> int:
    """A player's tournament score: the points of its games in order."""
    return sum(game_points(games[:index], game) for index, game in enumerate(games))


def performance(games: Iterable[ArenaGame]) -> float:
    """The tie-break: the average rating of the opponents the player beat (0 without a win)."""
    beaten = [game.opponent_rating for game in games if game.outcome is Outcome.WON]
    return sum(beaten) / len(beaten) if beaten else 0.0


@dataclass(frozen=True, slots=True)
class Standing:
    """One line of the standings."""

    rank: int
    player: str
    score: int
    performance: float
    fire: bool
    games: int
    berserks: int = 0
    """Races the player went berserk in."""


def standings(players: dict[str, Sequence[ArenaGame]]) -> list[Standing]:
    """Everybody's line, best first: higher score, then higher performance, then the player id (a stable order)."""
    lines = [
        (name, score(games), performance(games), on_fire(games), len(games), sum(game.berserk for game in games))
        for name, games in players.items()
    ]
    lines.sort(key=lambda line: (-line[1], -line[2], line[0]))
    return [
        Standing(rank, name, points, perf, fire, count, berserks)
        for rank, (name, points, perf, fire, count, berserks) in enumerate(lines, start=1)
    ]


@dataclass(frozen=True, slots=True)
class FreePlayer:
    """A player waiting for its next race: its score, its rating and whom it raced last."""

    player: str
    score: int
    rating: float
    last_opponent: str | None


def choose_pairs(free: Sequence[FreePlayer]) -> list[tuple[str, str]]:
    """Pairs among the free players: each with the free player of the closest score (rating breaking ties), never
    the one it raced last when anyone else is free. An odd one out waits for the next round."""
    waiting = sorted(free, key=lambda one: (-one.score, -one.rating, one.player))
    pairs: list[tuple[str, str]] = []
    while len(waiting) >= 2:
        first = waiting.pop(0)
        index = next(
            (number for number, other in enumerate(waiting) if other.player != first.last_opponent and first.player != other.last_opponent),
            0,
        )
        pairs.append((first.player, waiting.pop(index).player))
    return pairs
