"""Arena tournaments' rules (pure): the points of each race with streaks and berserk, the standings' order with its
tie-break, and who is paired with whom among the free players.

Scoring as lichess's arenas: a win 2, a draw 1, a loss 0; after two wins in a row every further result counts double
until a race is not won (the player is "on fire"); a player who went berserk (half the time limit) and won with at
least :data:`BERSERK_MIN_MOVES` moves gets one point more (not doubled). Ties are broken by performance: the average
rating of the opponents beaten (docs/COMMUNITY.md "Arena tournaments").
"""

from __future__ import annotations

import hashlib
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


# --- the operators' recurring arenas (docs/OPERATIONS.md "Recurring arenas") ---------------------------------------

SCHEDULE_ID_ALPHABET: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
SCHEDULE_ID_LENGTH: Final = 11
MINUTE_MS: Final = 60_000


@dataclass(frozen=True, slots=True)
class Schedule:
    """An operator's recurring arena: one opens every ``every`` minutes (counted from 00:00 UTC, so ``every=60``
    starts on the hour) and pairs for ``minutes``; it is listed ``ahead`` minutes before its start."""

    name: str
    every: int
    minutes: int
    time_limit: int = 300
    """Seconds of each race."""
    rated: bool = False
    max_players: int = 0
    """0: no cap."""
    ahead: int = 60

    def starts(self, now: int) -> list[int]:
        """The start times (ms) of the arenas that should exist at ``now``: the one pairing now, if any, and those
        starting within ``ahead`` minutes (at least the next one)."""
        period = self.every * MINUTE_MS
        current = now - now % period
        found = [current] if now < current + self.minutes * MINUTE_MS else []
        following = current + period
        while following <= now + self.ahead * MINUTE_MS or following == current + period:
            found.append(following)
            following += period
        return found

    def text(self) -> str:
        """The spec as :func:`parse_schedule` reads it."""
        fields = [f"name={self.name}", f"every={self.every}", f"minutes={self.minutes}", f"time_limit={self.time_limit}"]
        fields += [f"rated={'true' if self.rated else 'false'}", f"max_players={self.max_players}", f"ahead={self.ahead}"]
        return ";".join(fields)


SCHEDULE_BOUNDS: Final = {"every": (1, 10_080), "minutes": (1, 180), "time_limit": (10, 3600), "max_players": (0, 10_000), "ahead": (0, 10_080)}
"""Each whole-number field's bounds (minutes; ``time_limit`` seconds)."""


def parse_schedule(text: str) -> Schedule:
    """A schedule from ``name=Hourly 5-minute;every=60;minutes=55;time_limit=300;rated=true;max_players=0;ahead=60``
    (``name``, ``every`` and ``minutes`` required); ValueError naming what is wrong."""
    fields: dict[str, str] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"{part.strip()!r} is not key=value")
        fields[key.strip()] = value.strip()
    unknown = set(fields) - {"name", "rated", *SCHEDULE_BOUNDS}
    if unknown:
        raise ValueError(f"unknown fields {', '.join(sorted(unknown))} (known: name, every, minutes, time_limit, rated, max_players, ahead)")
    for required in ("name", "every", "minutes"):
        if not fields.get(required):
            raise ValueError(f"{required} is required")
    numbers: dict[str, int] = {}
    for key, (low, high) in SCHEDULE_BOUNDS.items():
        if key in fields:
            if not fields[key].isdigit() or not low <= int(fields[key]) <= high:
                raise ValueError(f"{key} must be a whole number from {low} to {high}, got {fields[key]!r}")
            numbers[key] = int(fields[key])
    rated = fields.get("rated", "false").lower()
    if rated not in ("true", "false"):
        raise ValueError(f"rated must be true or false, got {fields['rated']!r}")
    if numbers["minutes"] > numbers["every"]:
        raise ValueError("minutes must not exceed every: two arenas of one schedule would pair at once")
    if len(fields["name"]) > 32:
        raise ValueError("name must be at most 32 characters")
    return Schedule(fields["name"], rated=rated == "true", **numbers)


def occurrence_id(schedule: str, start_at: int) -> str:
    """The id of a schedule's arena starting at ``start_at``: the same in every process, so all may open it and it
    is opened once (letters and digits, as a race id)."""
    number = int.from_bytes(hashlib.sha256(f"{schedule}\n{start_at}".encode()).digest()[:16], "big")
    letters = []
    for _ in range(SCHEDULE_ID_LENGTH):
        number, index = divmod(number, len(SCHEDULE_ID_ALPHABET))
        letters.append(SCHEDULE_ID_ALPHABET[index])
    return "".join(letters)
