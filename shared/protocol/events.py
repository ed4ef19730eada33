"""Race events: everything that happens in a race, numbered per race, and the table of event types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final

from shared.board import Status
from shared.protocol.base import Message, message_types
from shared.protocol.records import FinalStanding, RaceAnalysis
from shared.protocol.states import AbortReason, AttemptState, CloseReason, Difficulty, Emote, ResultReason


@dataclass(frozen=True, slots=True)
class RaceEvent(Message):
    """Something that happened in a race, numbered by the race's sequence ``seq`` (1, 2, 3, …)."""

    race: str
    seq: int
    at: int
    """Server time of the event, ms since the Unix epoch."""


@dataclass(frozen=True, slots=True)
class PlayerJoined(RaceEvent):
    TYPE: ClassVar[str] = "player_joined"
    slot: int
    player: str
    name: str
    account: str | None = None
    """The player's registered handle; nil: anonymous (see :attr:`PlayerInfo.account`)."""
    bot: bool = False


@dataclass(frozen=True, slots=True)
class Countdown(RaceEvent):
    """Both seats are taken: the deal's layout (never its seed: revealed with the result), its commitment and the
    common start time."""

    TYPE: ClassVar[str] = "countdown"
    commitment: str
    """SHA-256 (hex) over the seed, profile, a secret salt and the proving line (docs/PROTOCOL.md "Fair deals")."""
    seed_chosen: bool
    """The creator chose the seed: this deal may have been studied beforehand."""
    difficulty: Difficulty | None
    """The deal's tier, when the server knows it (solvable-only races); nil otherwise."""
    start_at: int
    deadline: int | None
    columns: list[list[str]]
    """The six columns of the deal, first-dealt card first (the last card is available)."""
    bouquet: list[str]


@dataclass(frozen=True, slots=True)
class Started(RaceEvent):
    """Moves are open."""

    TYPE: ClassVar[str] = "started"


@dataclass(frozen=True, slots=True)
class WentBerserk(RaceEvent):
    """An arena player went berserk before the start (``arena_berserk``): its attempt ends at ``deadline``, half the
    race's time limit after the start; a win with at least 7 moves earns it one arena point more."""

    TYPE: ClassVar[str] = "berserk"
    slot: int
    deadline: int
    """Server time (ms) at which this seat's attempt ends (``time_limit``) if it still runs."""


@dataclass(frozen=True, slots=True)
class MoveMade(RaceEvent):
    """A player's action with its details: sent to that player itself and to spectators (delayed), never to the opponent."""

    TYPE: ClassVar[str] = "move"
    slot: int
    move: str
    move_seq: int
    """The player's number of actions including this one."""
    count: int
    left: int
    status: Status
    columns: list[list[str]] | None = None
    """For a ``redeal``: the six columns it dealt (first-dealt card first); clients cannot compute them without
    the seed. Nil for every other action."""


@dataclass(frozen=True, slots=True)
class Progress(RaceEvent):
    """What a player learns of the opponent's action: its progress only, never the move."""

    TYPE: ClassVar[str] = "progress"
    slot: int
    count: int
    left: int
    status: Status


@dataclass(frozen=True, slots=True)
class AttemptEnded(RaceEvent):
    """A player's attempt ended: ``cleared``, ``resigned``, ``abandoned`` (away past its grace period), ``stuck``,
    ``dead``, ``blocked``, ``time_limit`` or ``race_over``."""

    TYPE: ClassVar[str] = "attempt_ended"
    slot: int
    reason: AttemptState
    count: int
    left: int


@dataclass(frozen=True, slots=True)
class RaceResult(RaceEvent):
    """The race is over. ``winner`` is a slot, or nil for a draw."""

    TYPE: ClassVar[str] = "result"
    winner: int | None
    reason: ResultReason
    """``cleared`` (first to clear), ``count`` (higher foundation count), ``reached_first`` (equal counts,
    reached earlier), ``abandoned`` (rated races: the opponent abandoned) or ``draw``."""
    players: list[FinalStanding]
    seed: int | None = None
    """The deal's seed, revealed (nil only in races stored before seeds were hidden)."""
    salt: str | None = None
    """The commitment's salt (32 hex digits): with ``seed`` it recomputes the countdown's ``commitment``."""
    proving_line: list[str] | None = None
    """Solvable-only races: the winning line whose digest the commitment includes."""
    aborted: AbortReason | None = None
    """A rated race too short to count (``too_few_moves``, ``too_short``): nobody's rating changes and the players
    carry no ``rating``; nil for every other result."""


@dataclass(frozen=True, slots=True)
class Disconnected(RaceEvent):
    """No connection of this player is subscribed to the race any more (closed, or its server process died)."""

    TYPE: ClassVar[str] = "disconnected"
    slot: int
    grace_until: int | None
    """Server time (ms) at which its attempt ends as abandoned unless it is back; nil when nothing is at stake
    (the race has not started, or the attempt has already ended). Sent again when the grace period starts later."""


@dataclass(frozen=True, slots=True)
class Back(RaceEvent):
    """A disconnected player has a connection subscribed to the race again."""

    TYPE: ClassVar[str] = "back"
    slot: int


@dataclass(frozen=True, slots=True)
class PlayerLeft(RaceEvent):
    """A player gave up its seat before the start (``leave``, or its connection closed while waiting)."""

    TYPE: ClassVar[str] = "player_left"
    slot: int
    player: str


@dataclass(frozen=True, slots=True)
class RaceClosed(RaceEvent):
    """The race ended without a result: before it started, ``left`` (the creator left), ``abandoned`` (the creator's
    connection or server went away), ``cancelled`` (quick-match entry cancelled), ``lobby_full``, ``expired``
    (nobody joined in time) or ``paired`` (rated quick match seated the waiting player in ``new_race``); or at any
    time before its result, ``operator`` (an operator closed it; ``message`` says why)."""

    TYPE: ClassVar[str] = "race_closed"
    reason: CloseReason
    message: str | None = None
    """Why, in words, when an operator closed the race (reason ``operator``)."""
    new_race: str | None = None
    """With ``paired``: the race the player now sits in (its events follow on this connection)."""


@dataclass(frozen=True, slots=True)
class RematchOffered(RaceEvent):
    """A player of the finished race offers a rematch; the other accepts by sending ``rematch`` too before
    ``until`` (server time, ms), when the offer lapses."""

    TYPE: ClassVar[str] = "rematch_offered"
    slot: int
    until: int


@dataclass(frozen=True, slots=True)
class WatcherCount(RaceEvent):
    """The number of spectators changed."""

    TYPE: ClassVar[str] = "watchers"
    count: int


@dataclass(frozen=True, slots=True)
class RematchStarted(RaceEvent):
    """Both players agreed: ``new_race`` holds both of them (same seats and settings, a new deal), counting down."""

    TYPE: ClassVar[str] = "rematch"
    new_race: str


@dataclass(frozen=True, slots=True)
class EmoteSent(RaceEvent):
    """A player sent a quick emote: to both players live, never to live spectators (it stays in the race's record,
    so a replay has it)."""

    TYPE: ClassVar[str] = "emote"
    slot: int
    phrase: Emote


@dataclass(frozen=True, slots=True)
class AnalysisReady(RaceEvent):
    """The post-race analysis of the finished race is ready (sent once, after the result)."""

    TYPE: ClassVar[str] = "analysis"
    analysis: RaceAnalysis


EVENT_TYPES: Final[dict[str, type[RaceEvent]]] = message_types(globals(), RaceEvent)
"""Every race event, by its ``type`` (each class above with a ``TYPE``)."""
