"""The race domain without I/O: what a race's events mean, shared by the server and its clients."""

from shared.race.boards import board_from_layout, play_reported, replay_reported
from shared.race.fold import RaceSnapshot, fold_events

__all__ = ["RaceSnapshot", "board_from_layout", "fold_events", "play_reported", "replay_reported"]
