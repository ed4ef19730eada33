"""The race domain without I/O: what a race's events mean, shared by the server and its clients."""

from shared.race.fold import RaceSnapshot, fold_events

__all__ = ["RaceSnapshot", "fold_events"]
