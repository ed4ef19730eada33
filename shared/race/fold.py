"""The fold of a race's events into the race as it stood after them.

A race's stream holds every change with its time, so folding a prefix of it gives the race exactly as it was
at that moment (a spectator's delayed snapshot), never the live state. Pure: events in, a snapshot out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Final

from shared.protocol import (
    AttemptEnded,
    AttemptState,
    Back,
    Countdown,
    Disconnected,
    MoveMade,
    PlayerInfo,
    PlayerJoined,
    PlayerLeft,
    RaceClosed,
    RaceEvent,
    RaceResult,
    RaceStatus,
    Started,
    WatcherCount,
    WentBerserk,
)


@dataclass(slots=True)
class RaceSnapshot:
    """The race after the events folded so far: its status, deal and times, seats, watchers, and each seat's
    action count (to rebuild the boards)."""

    status: RaceStatus = RaceStatus.WAITING
    seed: int | None = None
    """Revealed by the result."""
    commitment: str | None = None
    """Published by the countdown."""
    start_at: int | None = None
    deadline: int | None = None
    watchers: int = 0
    event_seq: int = 0
    """The last event folded."""
    players: dict[int, PlayerInfo] = field(default_factory=dict)
    actions: dict[int, int] = field(default_factory=dict)

    def seats(self) -> list[PlayerInfo]:
        """The seated players, seat 0 first."""
        return [self.players[slot] for slot in sorted(self.players)]


def _joined(race: RaceSnapshot, event: PlayerJoined) -> None:
    race.players[event.slot] = PlayerInfo(
        slot=event.slot,
        player=event.player,
        name=event.name,
        count=0,
        left=52,
        state=AttemptState.PLAYING,
        account=event.account,
        bot=event.bot,
    )
    race.actions[event.slot] = 0


def _countdown(race: RaceSnapshot, event: Countdown) -> None:
    race.status, race.commitment, race.start_at, race.deadline = RaceStatus.COUNTDOWN, event.commitment, event.start_at, event.deadline


def _started(race: RaceSnapshot, event: Started) -> None:
    race.status = RaceStatus.RUNNING


def _berserk(race: RaceSnapshot, event: WentBerserk) -> None:
    race.players[event.slot] = replace(race.players[event.slot], berserk=True, deadline=event.deadline)


def _moved(race: RaceSnapshot, event: MoveMade) -> None:
    race.players[event.slot] = replace(race.players[event.slot], count=event.count, left=event.left)
    race.actions[event.slot] = event.move_seq


def _attempt_ended(race: RaceSnapshot, event: AttemptEnded) -> None:
    race.players[event.slot] = replace(race.players[event.slot], state=event.reason, count=event.count, left=event.left)


def _result(race: RaceSnapshot, event: RaceResult) -> None:
    race.status, race.seed = RaceStatus.FINISHED, event.seed
    for standing in event.players:
        race.players[standing.slot] = replace(race.players[standing.slot], state=standing.ended)


def _disconnected(race: RaceSnapshot, event: Disconnected) -> None:
    race.players[event.slot] = replace(race.players[event.slot], connected=False, grace_until=event.grace_until)


def _back(race: RaceSnapshot, event: Back) -> None:
    race.players[event.slot] = replace(race.players[event.slot], connected=True, grace_until=None)


def _watchers(race: RaceSnapshot, event: WatcherCount) -> None:
    race.watchers = event.count


def _player_left(race: RaceSnapshot, event: PlayerLeft) -> None:
    if event.slot == 1:  # back to waiting for a second player, with a new deal (seat 0 leaving closes the race)
        race.players.pop(event.slot, None)
        race.actions.pop(event.slot, None)
        race.status, race.commitment, race.start_at, race.deadline = RaceStatus.WAITING, None, None, None


def _closed(race: RaceSnapshot, event: RaceClosed) -> None:
    race.status, race.commitment = RaceStatus.CLOSED, None


FOLDS: Final[dict[type[RaceEvent], Callable[[RaceSnapshot, Any], None]]] = {
    PlayerJoined: _joined,
    Countdown: _countdown,
    Started: _started,
    WentBerserk: _berserk,
    MoveMade: _moved,
    AttemptEnded: _attempt_ended,
    RaceResult: _result,
    Disconnected: _disconnected,
    Back: _back,
    WatcherCount: _watchers,
    PlayerLeft: _player_left,
    RaceClosed: _closed,
}
"""What each event changes; the others (``progress``, ``rematch_offered``, ``rematch``, ``analysis``, ``emote``) change
nothing a snapshot shows."""


def fold_events(history: Iterable[RaceEvent], race: RaceSnapshot | None = None) -> RaceSnapshot:
    """``race`` (a new race if None) after ``history``, the race's events in order."""
    race = RaceSnapshot() if race is None else race
    for event in history:
        race.event_seq = event.seq
        change = FOLDS.get(type(event))
        if change is not None:
            change(race, event)
    return race
