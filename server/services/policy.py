"""What the operator decides for every race: the spectator delay (default and minimums), the reconnect grace and how
long a rematch offer stands. docs/FAIRPLAY.md argues for the default minimum."""

from __future__ import annotations

from dataclasses import dataclass

from shared.race.settings import SettingsInForce

DEFAULT_MIN_SPECTATOR_DELAY_MS = 60_000
"""No public race's spectators get events sooner (docs/FAIRPLAY.md "Spectator delay": a copied line is worth little
once it is a minute old, and a race is mostly decided within a few minutes)."""
DEFAULT_RATED_MIN_SPECTATOR_DELAY_MS = 180_000
"""Rated races: about the length of a whole race, so that nothing a spectator sees helps a player still racing."""


@dataclass(frozen=True, slots=True)
class RacePolicy:
    """Server-wide race defaults (``flowergarden serve --spectator-delay/--min-spectator-delay/--rated-min-spectator-delay/
    --grace/--rematch-window``)."""

    spectator_delay_ms: int = DEFAULT_MIN_SPECTATOR_DELAY_MS
    """Delay of a race that does not choose one."""
    min_spectator_delay_ms: int = DEFAULT_MIN_SPECTATOR_DELAY_MS
    """No public race's spectators get events sooner than this, whatever the race chose (fair play). A private race
    may choose less: its joiner sees the delay and accepts it (``accept_delay``) before joining."""
    rated_min_spectator_delay_ms: int = DEFAULT_RATED_MIN_SPECTATOR_DELAY_MS
    """The minimum of rated races (none is lower, private or not)."""
    grace_ms: int = 30_000
    """How long a disconnected player keeps its seat, for races that do not choose."""
    rematch_window_ms: int = 60_000
    """How long a rematch offer stands: a player is never put into a new race long after asking for it."""

    def delay_for(self, requested_ms: int | None, *, private: bool, rated: bool = False) -> int:
        """The delay (ms) a new race gets for its requested one (None: the default): never below the minimum (the
        rated minimum for rated races), except in a private race, whose joiner must accept a lower one."""
        wanted = self.spectator_delay_ms if requested_ms is None else requested_ms
        if rated:
            return max(wanted, self.rated_min_spectator_delay_ms)
        return wanted if private else max(wanted, self.min_spectator_delay_ms)

    def delay_of(self, settings: SettingsInForce) -> int:
        """The delay (ms) in force for a stored race's settings: its own, raised to the current minimum (the rated
        minimum for a rated race) unless the race is private and casual (its joiner accepted its delay)."""
        stored = self.spectator_delay_ms if settings.spectator_delay_ms is None else settings.spectator_delay_ms
        if settings.rated:
            return max(stored, self.rated_min_spectator_delay_ms)
        return stored if settings.private else max(stored, self.min_spectator_delay_ms)

    def needs_acceptance(self, settings: SettingsInForce) -> bool:
        """Whether a joiner must accept the race's delay: a private casual race below the server's minimum."""
        return settings.private and not settings.rated and self.delay_of(settings) < self.min_spectator_delay_ms

    def grace_for(self, requested_ms: int | None) -> int:
        """The grace period (ms) a new race gets."""
        return self.grace_ms if requested_ms is None else requested_ms
