"""What the operator decides for every race: the spectator delay (default and minimum), the reconnect grace and how
long a rematch offer stands."""

from __future__ import annotations

from dataclasses import dataclass

from server.store import RaceRecord


@dataclass(frozen=True, slots=True)
class RacePolicy:
    """Server-wide race defaults (``flowergarden serve --spectator-delay/--min-spectator-delay/--grace/--rematch-window``)."""

    spectator_delay_ms: int = 10_000
    """Delay of a race that does not choose one."""
    min_spectator_delay_ms: int = 0
    """No race's spectators get events sooner than this, whatever the race chose (fair play)."""
    grace_ms: int = 30_000
    """How long a disconnected player keeps its seat, for races that do not choose."""
    rematch_window_ms: int = 60_000
    """How long a rematch offer stands: a player is never put into a new race long after asking for it."""

    def delay_for(self, requested_seconds: int | None) -> int:
        """The delay (ms) a new race gets for its requested one (None: the default), never below the minimum."""
        wanted = self.spectator_delay_ms if requested_seconds is None else requested_seconds * 1000
        return max(wanted, self.min_spectator_delay_ms)

    def delay_of(self, record: RaceRecord) -> int:
        """The delay (ms) in force for a stored race: its own, raised to the current minimum."""
        stored = self.spectator_delay_ms if record.spectator_delay_ms is None else record.spectator_delay_ms
        return max(stored, self.min_spectator_delay_ms)

    def grace_for(self, requested_seconds: int | None) -> int:
        """The grace period (ms) a new race gets."""
        return self.grace_ms if requested_seconds is None else requested_seconds * 1000
