"""The daily deal's rules: UTC days, the order of its leaderboard, streaks and the day's statistics (pure).

One deal a UTC day for everybody (docs/COMMUNITY.md). The server (``server/services/daily.py``) keeps the attempts;
this module says how an attempt's stored fields read as a result, how results rank, and what a run of days is.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from shared.protocol.states import AttemptState

DAY_MS: Final = 86_400_000
"""A UTC day in milliseconds (UTC has no daylight saving; leap seconds are smeared by the clocks)."""
DAY_FORMAT: Final = "%Y-%m-%d"
DAY_LEN: Final = 10
"""A day's name, ``YYYY-MM-DD``."""
CARDS: Final = 52
BUCKET_MS: Final = 60_000
"""The width of one bar of the day's clear-time distribution: a minute."""


def day_of(ms: int) -> str:
    """The UTC day (``YYYY-MM-DD``) that contains the instant ``ms`` (ms since the Unix epoch)."""
    return datetime.datetime.fromtimestamp(ms // 1000, datetime.UTC).strftime(DAY_FORMAT)


def day_start(day: str) -> int:
    """The first millisecond of ``day``; ValueError if it is not a ``YYYY-MM-DD`` date."""
    if len(day) != DAY_LEN:
        raise ValueError(f"not a day: {day!r}")
    moment = datetime.datetime.strptime(day, DAY_FORMAT).replace(tzinfo=datetime.UTC)
    return int(moment.timestamp()) * 1000


def next_day(day: str) -> str:
    """The day after ``day``."""
    return day_of(day_start(day) + DAY_MS)


@dataclass(frozen=True, slots=True)
class AttemptFacts:
    """One attempt as stored: when it started and must end, how far it got and whether it has ended."""

    started_at: int
    deadline: int
    state: AttemptState
    count: int
    moves: int
    ended_at: int | None
    """When it ended; None while it is (or was, until its deadline) being played."""

    def settled(self, now: int) -> AttemptFacts:
        """The attempt as it stands at ``now``: one still ``playing`` past its deadline ended there (``time_limit``)."""
        if self.state is AttemptState.PLAYING and now >= self.deadline:
            return AttemptFacts(self.started_at, self.deadline, AttemptState.TIME_LIMIT, self.count, self.moves, self.deadline)
        return self

    @property
    def over(self) -> bool:
        """Whether the attempt has ended."""
        return self.state is not AttemptState.PLAYING

    @property
    def time_ms(self) -> int:
        """From its start to its end (0 while it runs)."""
        return 0 if self.ended_at is None else self.ended_at - self.started_at

    @property
    def cleared(self) -> bool:
        """All the cards reached the foundations."""
        return self.state is AttemptState.CLEARED


def rank_key(facts: AttemptFacts) -> tuple[int, int, int, int]:
    """The leaderboard's order: who cleared first, then the faster, then the fewer moves; among those who did not
    clear, the more cards on the foundations, then the fewer moves, then the faster."""
    if facts.cleared:
        return (0, facts.time_ms, facts.moves, 0)
    return (1, CARDS - facts.count, facts.moves, facts.time_ms)


def ranked(results: Mapping[str, AttemptFacts]) -> list[tuple[str, AttemptFacts]]:
    """Who played (by name) and their ended attempts in leaderboard order (the name breaks full ties)."""
    return sorted(results.items(), key=lambda item: (rank_key(item[1]), item[0]))


@dataclass(frozen=True, slots=True)
class DayStatistics:
    """What a finished day tells about everybody: how many played and cleared, and how fast the clears were."""

    players: int
    cleared: int
    clear_minutes: list[int]
    """How many clears took 0–1 min, 1–2 min, … (index: whole minutes; trailing zeros left out)."""


def statistics(results: Iterable[AttemptFacts]) -> DayStatistics:
    """The day's statistics over its counted attempts."""
    players = 0
    minutes: list[int] = []
    for facts in results:
        players += 1
        if facts.cleared:
            bar = facts.time_ms // BUCKET_MS
            minutes.extend([0] * (bar + 1 - len(minutes)))
            minutes[bar] += 1
    return DayStatistics(players=players, cleared=sum(minutes), clear_minutes=minutes)


def streaks(cleared_days: Sequence[str], today: str) -> tuple[int, int]:
    """(current, best) runs of consecutive days with a clear. The current run ends today or yesterday (today's
    deal may still be ahead); ``cleared_days`` in any order."""
    days = sorted(set(cleared_days))
    best = run = 0
    previous: str | None = None
    for day in days:
        run = run + 1 if previous is not None and next_day(previous) == day else 1
        best = max(best, run)
        previous = day
    yesterday = day_of(day_start(today) - DAY_MS)
    current = run if previous in (today, yesterday) else 0
    return current, best
