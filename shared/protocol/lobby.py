"""The lobby: an open race as listed, and the events that keep a watcher's list current."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final

from shared.protocol.base import Message, message_types
from shared.protocol.records import RaceSettings
from shared.protocol.states import Difficulty, RaceStatus


@dataclass(frozen=True, slots=True)
class LobbyEntry:
    """An open race as the lobby lists it: public, not started yet."""

    race: str
    creator: str
    """The creator's display name."""
    player: str
    """The creator's player id."""
    settings: RaceSettings
    """As created (``seed`` always nil, ``private`` always false)."""
    seats: int
    """Seats taken: 1 while waiting, 2 during the countdown (then it leaves the list)."""
    status: RaceStatus
    """``waiting`` (joinable) or ``countdown`` (full, about to start)."""
    created_at: int
    """Server time (ms) of the creation: the entry's age."""
    creator_account: str | None = None
    """The creator's registered handle (nil: anonymous; see :attr:`PlayerInfo.account`)."""
    creator_bot: bool = False
    seed_chosen: bool = False
    """The creator chose the seed (the deal may have been studied; never rated)."""
    difficulty: Difficulty | None = None
    """The tier of the deal, when known (solvable-only races)."""


@dataclass(frozen=True, slots=True)
class LobbyEvent(Message):
    """A change of the lobby list, sent to connections that watch the lobby."""

    at: int
    """Server time of the change, ms since the Unix epoch."""


@dataclass(frozen=True, slots=True)
class LobbyAdded(LobbyEvent):
    """A race opened (or an open race was not listed on this watcher's list)."""

    TYPE: ClassVar[str] = "lobby_added"
    entry: LobbyEntry


@dataclass(frozen=True, slots=True)
class LobbyChanged(LobbyEvent):
    """A listed race changed: its second seat was taken (countdown) or freed again."""

    TYPE: ClassVar[str] = "lobby_changed"
    entry: LobbyEntry


@dataclass(frozen=True, slots=True)
class LobbyRemoved(LobbyEvent):
    """A race left the list: it started, or was closed."""

    TYPE: ClassVar[str] = "lobby_removed"
    race: str


@dataclass(frozen=True, slots=True)
class LobbyReset(LobbyEvent):
    """The whole list again, replacing the watcher's copy (after the server lost track of changes)."""

    TYPE: ClassVar[str] = "lobby_reset"
    races: list[LobbyEntry]


LOBBY_EVENT_TYPES: Final[dict[str, type[LobbyEvent]]] = message_types(globals(), LobbyEvent)
"""Every lobby event, by its ``type``."""
