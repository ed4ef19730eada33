"""The race protocol, version 1: every message as a typed dataclass, and the one encoder/decoder of frames.

Both the server and the client library import this module; nothing else in the
project knows the wire format. It imports nothing from the rest of ``server/``
(only the engine's error codes), so a client can use it without the server.
docs/PROTOCOL.md is the human-readable form of this module.

A frame is one binary WebSocket message holding one MessagePack map with a
``type`` field. Requests carry a client-chosen ``id`` that the reply echoes;
race events carry the race id and a per-race sequence number ``seq``.
"""

from __future__ import annotations

import types
from dataclasses import MISSING, dataclass, field, fields
from enum import Enum
from functools import cache
from typing import Any, ClassVar, Final, TypeVar, Union, cast, get_args, get_origin, get_type_hints

import msgpack

from shared.errors import IllegalMoveCode, NotationErrorCode

PROTOCOL_VERSION: Final = 1
"""The version a client names in ``hello``; the server answers ``unsupported_protocol`` to any other."""

MAX_FRAME_BYTES: Final = 16 * 1024
"""Largest frame the server reads; a bigger one closes the connection with code 1009."""
MAX_REQUEST_ID: Final = 2**53 - 1
"""Request ids are integers from 0 to 2^53-1 (exact in every language's number type)."""
MAX_NAME_LEN: Final = 32
MAX_TOKEN_LEN: Final = 64
MAX_RACE_ID_LEN: Final = 32
MAX_MOVE_ID_LEN: Final = 64
MAX_MOVE_TEXT_LEN: Final = 16
MAX_INVITE_LEN: Final = 16
MAX_SEED: Final = 2**64 - 1
MAX_TIME_LIMIT_SECONDS: Final = 24 * 3600
MAX_SPECTATOR_DELAY_SECONDS: Final = 3600
MAX_GRACE_SECONDS: Final = 3600
MAX_LIST_LIMIT: Final = 100
"""Most races one ``live_races`` reply lists."""
MAX_REPLAY_PAGE: Final = 256
"""Most events one ``replay_page`` carries."""
MAX_WATCHED_PER_CONNECTION: Final = 16
"""Most races one connection watches at once (``watch_limit`` past it)."""

# Bounds for unpacking untrusted input: msgpack bounds lengths by the input size,
# but a 16 KiB frame of nils would still become a 16k-item list without these.
_CLIENT_FRAME_LIMITS: Final = {"max_array_len": 64, "max_map_len": 32, "max_str_len": MAX_FRAME_BYTES, "max_bin_len": 0}
_SERVER_FRAME_LIMITS: Final = {"max_array_len": 4096, "max_map_len": 64, "max_str_len": 1 << 20, "max_bin_len": 0}


class ErrorCode(str, Enum):
    """Protocol-level error codes (the engine's move codes are listed in :data:`ENGINE_CODES`)."""

    BAD_FRAME = "bad_frame"
    """The frame is not one MessagePack map (text frame, bad bytes, trailing data, extension types)."""
    UNKNOWN_TYPE = "unknown_type"
    """The ``type`` field names no request."""
    BAD_FIELD = "bad_field"
    """A field is missing, of the wrong type or out of range; ``field`` names it."""
    UNSUPPORTED_PROTOCOL = "unsupported_protocol"
    """``hello`` named a protocol version the server does not speak; ``supported`` lists those it does."""
    HELLO_REQUIRED = "hello_required"
    """Any request before a successful ``hello``."""
    ALREADY_HELLO = "already_hello"
    """A second ``hello`` on the same connection."""
    BAD_TOKEN = "bad_token"
    """The token is unknown, expired, or not the one this connection's ``hello`` established."""
    RATE_LIMITED = "rate_limited"
    """Too many frames; this one was dropped. Keep sending and the connection is closed (1008)."""
    UNKNOWN_RACE = "unknown_race"
    RACE_FULL = "race_full"
    ALREADY_SEATED = "already_seated"
    """The player tried to join a race it already sits in."""
    NOT_SEATED = "not_seated"
    """The player has no seat in that race."""
    NOT_STARTED = "not_started"
    """The race is waiting for its second player or still counting down."""
    RACE_OVER = "race_over"
    """The race has a result; nothing more can be played."""
    ATTEMPT_OVER = "attempt_over"
    """This player's attempt has ended (cleared, resigned, abandoned, stuck, dead, time limit)."""
    OUT_OF_SEQUENCE = "out_of_sequence"
    """``seq`` is not the player's next action number; ``expected`` gives it."""
    TOO_MANY_MOVES = "too_many_moves"
    INTERNAL_ERROR = "internal_error"
    """A server fault; the request may or may not have been applied (a resent move with the same move_id is safe)."""
    UNAVAILABLE = "unavailable"
    """The store is unreachable; nothing was applied."""
    SPECTATING = "spectating"
    """This connection watches the race: it cannot act in it (move, resign, stuck)."""
    NOT_FINISHED = "not_finished"
    """A replay (watch the race instead) or a ``rematch`` of a race that has no result yet."""
    WATCH_LIMIT = "watch_limit"
    """The connection already watches :data:`MAX_WATCHED_PER_CONNECTION` races; unwatch one first."""
    SEED_POOL_EMPTY = "seed_pool_empty"
    """No solver-proven deal is ready for ``solvable_only``; nothing was created, retry in a few seconds."""
    UNKNOWN_INVITE = "unknown_invite"
    """No race waiting for its second player has this invite code."""
    ALREADY_STARTED = "already_started"
    """``leave`` after the start time: resign instead."""
    RACE_CLOSED = "race_closed"
    """The race was closed before it started (its creator left)."""
    NOT_QUEUED = "not_queued"
    """``cancel_quick_match`` without a queue entry (perhaps it was just matched: watch your race's events)."""
    LOBBY_FULL = "lobby_full"
    """The lobby lists as many open races as it may; create a private race or try later."""
    TOO_MANY_OPEN_RACES = "too_many_open_races"
    """This connection already has as many races waiting for an opponent (and queue entries) as it may."""


ENGINE_CODES: Final = tuple(code.value for code in IllegalMoveCode) + tuple(code.value for code in NotationErrorCode)
"""The engine's codes, passed through unchanged for illegal or unreadable moves."""
ERROR_CODES: Final = frozenset(code.value for code in ErrorCode) | frozenset(ENGINE_CODES)
"""Every ``code`` an ``error`` message can carry."""


class CloseCode:
    """WebSocket close codes the server uses."""

    NORMAL: Final = 1000
    GOING_AWAY: Final = 1001
    """The server is shutting down; reconnect (to another process) and ``sync`` (reason :data:`SHUTDOWN_REASON`)."""
    POLICY_VIOLATION: Final = 1008
    """Flooding past the rate limit, or no ``hello`` within the hello timeout."""
    MESSAGE_TOO_BIG: Final = 1009
    """A frame larger than the frame limit."""
    INTERNAL_ERROR: Final = 1011


SHUTDOWN_REASON: Final = "server_shutdown"
"""The close reason (with code 1001) of a graceful shutdown, after the ``server_shutdown`` message."""


class ProtocolError(Exception):
    """A frame that cannot be accepted; ``code`` and ``field`` go into the ``error`` reply."""

    def __init__(self, code: ErrorCode, message: str, *, field: str | None = None, request_id: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.request_id = request_id


# --- declaring messages ------------------------------------------------------------


def bounded(*, max_len: int | None = None, low: int | None = None, high: int | None = None, default: Any = MISSING) -> Any:
    """A dataclass field with limits checked by :func:`decode`: string length, or an integer range."""
    metadata = {"max_len": max_len, "low": low, "high": high}
    if default is MISSING:
        return field(metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True, slots=True)
class Message:
    """Base of every frame; ``TYPE`` is the value of its ``type`` field."""

    TYPE: ClassVar[str] = ""

    def to_wire(self) -> dict[str, Any]:
        """The MessagePack map of this message (``type`` first)."""
        return {"type": self.TYPE, **{f.name: _plain(getattr(self, f.name)) for f in fields(self)}}


@dataclass(frozen=True, slots=True)
class Request(Message):
    """A client request; the reply (or ``error``) carries the same ``id``."""

    id: int = bounded(low=0, high=MAX_REQUEST_ID)


@dataclass(frozen=True, slots=True)
class SessionRequest(Request):
    """A request authenticated by the session token."""

    token: str = bounded(max_len=MAX_TOKEN_LEN)


@dataclass(frozen=True, slots=True)
class RaceRequest(SessionRequest):
    """A request about one race, authenticated by the session token."""

    race: str = bounded(max_len=MAX_RACE_ID_LEN)


@dataclass(frozen=True, slots=True)
class RaceSettings:
    """How a race is played; chosen by its creator."""

    profile: str = "classic"
    """``classic`` or ``foundation-only``."""
    undo: bool = False
    redeal_once: bool = False
    time_limit: int | None = bounded(low=1, high=MAX_TIME_LIMIT_SECONDS, default=None)
    """Seconds from the start after which every attempt still running ends; None for no limit."""
    seed: int | None = bounded(low=0, high=MAX_SEED, default=None)
    """A fixed deal; None lets the server draw one at random."""
    spectator_delay: int | None = bounded(low=0, high=MAX_SPECTATOR_DELAY_SECONDS, default=None)
    """Seconds spectators lag behind the race (fair play); None: the server's default. Never below the server's minimum."""
    grace: int | None = bounded(low=1, high=MAX_GRACE_SECONDS, default=None)
    """Seconds a disconnected player keeps its seat before its attempt ends as abandoned; None: the server's default."""
    solvable_only: bool = False
    """Deal only a seed the solver proved winnable (from the server's pool); not together with ``seed``."""
    private: bool = False
    """Never listed in the lobby; the creator gets an invite code to share (``join_invite``)."""


@dataclass(frozen=True, slots=True)
class PlayerInfo:
    """One seat of a race as everybody may see it."""

    slot: int
    player: str
    name: str
    count: int
    """Cards on this player's foundations."""
    left: int
    """Cards not yet on the foundations."""
    state: str
    """``playing`` or how the attempt ended (see :class:`AttemptEnded`)."""
    connected: bool = True
    """False while no connection of this player is subscribed to the race (see :class:`Disconnected`)."""
    grace_until: int | None = None
    """While disconnected: server time (ms) at which the attempt ends as abandoned unless the player is back."""


@dataclass(frozen=True, slots=True)
class RaceInfo:
    """A race as a player sees it when creating, joining or syncing."""

    race: str
    status: str
    """``waiting`` (for the second player), ``countdown``, ``running`` or ``finished``."""
    settings: RaceSettings
    players: list[PlayerInfo]
    seed: int | None
    """Revealed when the countdown starts (or given by the creator)."""
    start_at: int | None
    """Server time (ms since the Unix epoch) at which moves open."""
    deadline: int | None
    """Server time (ms) at which the time limit ends the attempts still running."""
    event_seq: int
    """The sequence number of the race's latest event (for a spectator's snapshot: the last event it includes)."""
    watchers: int = 0
    """How many connections watch the race."""
    invite: str | None = None
    """A private race's invite code, while the race waits for its second player (nil otherwise)."""


@dataclass(frozen=True, slots=True)
class BoardView:
    """One player's position as spectators see it: its actions and the board they lead to."""

    slot: int
    moves: list[str]
    """The player's actions in order (replay them on the deal to follow live ``move`` events)."""
    columns: list[list[str]]
    """Six columns, first-dealt card first (the last card is available)."""
    bouquet: list[str]
    foundations: list[str | None]
    """Top card of each foundation in suit order C, D, H, S (nil: empty)."""
    count: int
    status: str
    undos: int
    redeal_used: bool


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
    status: str
    """``waiting`` (joinable) or ``countdown`` (full, about to start)."""
    created_at: int
    """Server time (ms) of the creation: the entry's age."""


# --- requests ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello(Request):
    """First request of a connection: a new session, or the resumption of one with its token."""

    TYPE: ClassVar[str] = "hello"
    protocol: int = bounded(low=0, high=2**31)
    name: str = bounded(max_len=MAX_NAME_LEN)
    token: str | None = bounded(max_len=MAX_TOKEN_LEN, default=None)


@dataclass(frozen=True, slots=True)
class Create(SessionRequest):
    """Open a race and take its first seat."""

    TYPE: ClassVar[str] = "create"
    settings: RaceSettings = field(default_factory=RaceSettings)


@dataclass(frozen=True, slots=True)
class Join(RaceRequest):
    """Take the second seat of a waiting race; the countdown starts at once."""

    TYPE: ClassVar[str] = "join"


@dataclass(frozen=True, slots=True)
class JoinInvite(SessionRequest):
    """Take the second seat of a private race by its invite code."""

    TYPE: ClassVar[str] = "join_invite"
    code: str = bounded(max_len=MAX_INVITE_LEN)


@dataclass(frozen=True, slots=True)
class Leave(RaceRequest):
    """Give up a seat before the start: the creator closes the race, the second player frees its seat."""

    TYPE: ClassVar[str] = "leave"


@dataclass(frozen=True, slots=True)
class WatchLobby(SessionRequest):
    """Receive the list of open races, then every change of it."""

    TYPE: ClassVar[str] = "watch_lobby"


@dataclass(frozen=True, slots=True)
class UnwatchLobby(SessionRequest):
    """Stop receiving lobby changes."""

    TYPE: ClassVar[str] = "unwatch_lobby"


@dataclass(frozen=True, slots=True)
class QuickMatch(SessionRequest):
    """Race the next player who asks for the same settings; wait in the queue until one does."""

    TYPE: ClassVar[str] = "quick_match"
    settings: RaceSettings = field(default_factory=RaceSettings)


@dataclass(frozen=True, slots=True)
class CancelQuickMatch(SessionRequest):
    """Leave the quick-match queue."""

    TYPE: ClassVar[str] = "cancel_quick_match"


@dataclass(frozen=True, slots=True)
class Rematch(RaceRequest):
    """After a finished race: offer (or accept) a new race with the same settings and a new deal."""

    TYPE: ClassVar[str] = "rematch"


@dataclass(frozen=True, slots=True)
class MoveRequest(RaceRequest):
    """One action of the player: a card move in notation, ``undo`` or ``redeal``."""

    TYPE: ClassVar[str] = "move"
    seq: int = bounded(low=0, high=2**31)
    """How many actions this player has made before this one (its next action number)."""
    move_id: str = bounded(max_len=MAX_MOVE_ID_LEN)
    """Client-chosen, unique per player and race; a resent move with the same id is applied once."""
    move: str = bounded(max_len=MAX_MOVE_TEXT_LEN)


@dataclass(frozen=True, slots=True)
class Resign(RaceRequest):
    """End this player's attempt; its foundation count still counts."""

    TYPE: ClassVar[str] = "resign"


@dataclass(frozen=True, slots=True)
class Stuck(RaceRequest):
    """Declare that this player can make no more progress; ends its attempt."""

    TYPE: ClassVar[str] = "stuck"


@dataclass(frozen=True, slots=True)
class Sync(RaceRequest):
    """Get the race state and own moves, and receive the race's events after ``after`` (for reconnects)."""

    TYPE: ClassVar[str] = "sync"
    after: int = bounded(low=0, high=2**31, default=0)


@dataclass(frozen=True, slots=True)
class LiveRaces(SessionRequest):
    """List the races being played now (countdown or running), newest first, with players and progress."""

    TYPE: ClassVar[str] = "live_races"
    limit: int = bounded(low=1, high=MAX_LIST_LIMIT, default=50)


@dataclass(frozen=True, slots=True)
class Watch(RaceRequest):
    """Spectate a race: a snapshot of both boards as of now minus the spectator delay, then its events, delayed."""

    TYPE: ClassVar[str] = "watch"
    after: int | None = bounded(low=0, high=2**31, default=None)
    """Resume after this event ``seq`` (a spectator reconnecting); nil: right after the snapshot."""


@dataclass(frozen=True, slots=True)
class Unwatch(RaceRequest):
    """Stop spectating a race."""

    TYPE: ClassVar[str] = "unwatch"


@dataclass(frozen=True, slots=True)
class Replay(RaceRequest):
    """One page of a finished race's full event log (every move of both players, with its time)."""

    TYPE: ClassVar[str] = "replay"
    after: int = bounded(low=0, high=2**31, default=0)
    """The page starts after this event ``seq``."""
    limit: int = bounded(low=1, high=MAX_REPLAY_PAGE, default=MAX_REPLAY_PAGE)


# --- replies ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Welcome(Message):
    """Reply to ``hello``: the session token proves this player's seats; keep it secret."""

    TYPE: ClassVar[str] = "welcome"
    id: int
    protocol: int
    token: str
    player: str
    name: str
    server_time: int
    """Server clock, ms since the Unix epoch, to translate ``start_at`` and ``deadline``."""


@dataclass(frozen=True, slots=True)
class Seated(Message):
    """Reply to ``create`` and ``join``: the race and the player's seat (0 for the creator, 1 for the joiner)."""

    TYPE: ClassVar[str] = "seated"
    id: int
    race: RaceInfo
    slot: int


@dataclass(frozen=True, slots=True)
class Moved(Message):
    """Reply to ``move``: the action is stored and will never be lost."""

    TYPE: ClassVar[str] = "moved"
    id: int
    race: str
    move: str
    seq: int
    """This player's number of actions including this one (the next ``seq`` to send)."""
    count: int
    left: int
    status: str
    """The engine's status of the player's position: ``playing``, ``won``, ``blocked`` or ``dead``."""
    undos: int
    duplicate: bool
    """True when this ``move_id`` had already been applied; nothing was applied again."""


@dataclass(frozen=True, slots=True)
class Ok(Message):
    """Reply to ``resign``, ``stuck``, ``unwatch``, ``leave``, ``rematch`` (an offer), ``unwatch_lobby`` and
    ``cancel_quick_match``."""

    TYPE: ClassVar[str] = "ok"
    id: int
    race: str | None = None
    """The race the request was about (nil for requests about no race)."""


@dataclass(frozen=True, slots=True)
class Queued(Message):
    """Reply to ``quick_match`` when nobody is waiting yet: the player waits in seat 0 of an unlisted race."""

    TYPE: ClassVar[str] = "queued"
    id: int
    race: RaceInfo


@dataclass(frozen=True, slots=True)
class LobbySnapshot(Message):
    """Reply to ``watch_lobby``: every open race, oldest first; changes follow as lobby events."""

    TYPE: ClassVar[str] = "lobby"
    id: int
    races: list[LobbyEntry]


@dataclass(frozen=True, slots=True)
class Synced(Message):
    """Reply to ``sync``: the race, the player's seat and its own actions so far (replay them on the deal)."""

    TYPE: ClassVar[str] = "synced"
    id: int
    race: RaceInfo
    slot: int
    moves: list[str]


@dataclass(frozen=True, slots=True)
class RaceList(Message):
    """Reply to ``live_races``."""

    TYPE: ClassVar[str] = "race_list"
    id: int
    races: list[RaceInfo]


@dataclass(frozen=True, slots=True)
class Watching(Message):
    """Reply to ``watch``: the race and both boards as they stood at ``as_of``; its later events follow, each delayed."""

    TYPE: ClassVar[str] = "watching"
    id: int
    race: RaceInfo
    """The race as of ``as_of``; ``race.event_seq`` is the last event the snapshot includes."""
    boards: list[BoardView]
    """Both players' positions as of ``as_of`` (empty before the countdown)."""
    as_of: int
    """Server time (ms) of the snapshot: now minus the delay."""
    delay_ms: int
    """Each later event reaches this connection no earlier than its ``at`` plus this delay."""


@dataclass(frozen=True, slots=True)
class ReplayPage(Message):
    """Reply to ``replay``: the race's final state and up to ``limit`` events after ``after``, with every detail."""

    TYPE: ClassVar[str] = "replay_page"
    id: int
    race: RaceInfo
    events: list[RaceEvent]
    complete: bool
    """True when the page reaches the race's last event (the ``result``)."""


@dataclass(frozen=True, slots=True)
class ServerShutdown(Message):
    """Sent once before a graceful shutdown closes the connection (1001): reconnect, ``hello`` with the token, ``sync``."""

    TYPE: ClassVar[str] = "server_shutdown"
    message: str


@dataclass(frozen=True, slots=True)
class Error(Message):
    """A refused request (``id`` echoed) or an unreadable frame (``id`` nil). Nothing was changed."""

    TYPE: ClassVar[str] = "error"
    id: int | None
    code: str
    message: str
    field: str | None = None
    """For ``bad_field``: the field's name (``settings.seed``)."""
    expected: int | None = None
    """For ``out_of_sequence``: the ``seq`` the server expects."""


# --- race events -------------------------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class Countdown(RaceEvent):
    """Both seats are taken: the deal and the common start time."""

    TYPE: ClassVar[str] = "countdown"
    seed: int
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
class MoveMade(RaceEvent):
    """A player's action with its details: sent to that player itself and to spectators (delayed), never to the opponent."""

    TYPE: ClassVar[str] = "move"
    slot: int
    move: str
    move_seq: int
    """The player's number of actions including this one."""
    count: int
    left: int
    status: str


@dataclass(frozen=True, slots=True)
class Progress(RaceEvent):
    """What a player learns of the opponent's action: its progress only, never the move."""

    TYPE: ClassVar[str] = "progress"
    slot: int
    count: int
    left: int
    status: str


@dataclass(frozen=True, slots=True)
class AttemptEnded(RaceEvent):
    """A player's attempt ended: ``cleared``, ``resigned``, ``abandoned`` (away past its grace period), ``stuck``,
    ``dead``, ``blocked``, ``time_limit`` or ``race_over``."""

    TYPE: ClassVar[str] = "attempt_ended"
    slot: int
    reason: str
    count: int
    left: int


@dataclass(frozen=True, slots=True)
class FinalStanding:
    """One player's line in the result."""

    slot: int
    player: str
    name: str
    count: int
    left: int
    ended: str
    """How the attempt ended (``race_over`` when the race was decided while it still ran)."""
    time_ms: int
    """From the start time to the end of the attempt."""
    moves: int
    undos: int


@dataclass(frozen=True, slots=True)
class RaceResult(RaceEvent):
    """The race is over. ``winner`` is a slot, or nil for a draw."""

    TYPE: ClassVar[str] = "result"
    winner: int | None
    reason: str
    """``cleared`` (first to clear), ``count`` (higher foundation count), ``reached_first`` (equal counts,
    reached earlier) or ``draw``."""
    players: list[FinalStanding]


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
    """The race ended before it started: ``left`` (the creator left), ``abandoned`` (the creator's connection or
    server went away), ``cancelled`` (quick-match entry cancelled) or ``lobby_full``."""

    TYPE: ClassVar[str] = "race_closed"
    reason: str


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


REQUEST_TYPES: Final[dict[str, type[Request]]] = {
    cls.TYPE: cls
    for cls in (
        Hello, Create, Join, JoinInvite, Leave, MoveRequest, Resign, Stuck, Sync, LiveRaces, Watch, Unwatch, Replay, WatchLobby,
        UnwatchLobby, QuickMatch, CancelQuickMatch, Rematch,
    )
}  # fmt: skip
EVENT_TYPES: Final[dict[str, type[RaceEvent]]] = {
    cls.TYPE: cls
    for cls in (
        PlayerJoined, Countdown, Started, MoveMade, Progress, AttemptEnded, RaceResult, Disconnected, Back, WatcherCount, PlayerLeft,
        RaceClosed, RematchOffered, RematchStarted,
    )
}  # fmt: skip
LOBBY_EVENT_TYPES: Final[dict[str, type[LobbyEvent]]] = {cls.TYPE: cls for cls in (LobbyAdded, LobbyChanged, LobbyRemoved, LobbyReset)}
SERVER_MESSAGE_TYPES: Final[dict[str, type[Message]]] = {
    **{
        cls.TYPE: cls
        for cls in (Welcome, Seated, Moved, Ok, Synced, RaceList, Watching, ReplayPage, ServerShutdown, Queued, LobbySnapshot, Error)
    },
    **EVENT_TYPES,
    **LOBBY_EVENT_TYPES,
}


# --- encoding and decoding -------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """Dataclasses to maps, recursively, for packing."""
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, Message):
        return value.to_wire()  # a message inside a message (events of a replay page) keeps its ``type``
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    return value


def as_map(value: Any) -> dict[str, Any]:
    """A dataclass of this module as the plain map it travels as (to store a :class:`LobbyEntry`)."""
    document: dict[str, Any] = _plain(value)
    return document


def encode(message: Message) -> bytes:
    """The frame of one message."""
    return pack(message.to_wire())


def pack(document: dict[str, Any]) -> bytes:
    """A map as MessagePack bytes (used by tests and tools that send hand-made frames)."""
    data: bytes = msgpack.packb(document, use_bin_type=True)
    return data


def _reject_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"extension type {code} is not allowed")


def unpack_map(data: bytes, *, from_server: bool = False) -> dict[str, Any]:
    """The MessagePack map of a frame, with limits for untrusted input; ProtocolError ``bad_frame`` otherwise."""
    limits = _SERVER_FRAME_LIMITS if from_server else _CLIENT_FRAME_LIMITS
    try:
        document = msgpack.unpackb(data, raw=False, strict_map_key=True, ext_hook=_reject_ext, max_ext_len=0, **limits)
    except (ValueError, TypeError, RecursionError) as error:
        raise ProtocolError(ErrorCode.BAD_FRAME, f"not a MessagePack frame: {error}") from None
    if not isinstance(document, dict):
        raise ProtocolError(ErrorCode.BAD_FRAME, "a frame is one MessagePack map")
    return document


def decode_request(data: bytes) -> Request:
    """Read a client frame into its request dataclass; raises :class:`ProtocolError`."""
    return _decode(unpack_map(data), REQUEST_TYPES)


def decode_server_message(data: bytes) -> Message:
    """Read a server frame (a reply, an error or a race event); raises :class:`ProtocolError`."""
    return _decode(unpack_map(data, from_server=True), SERVER_MESSAGE_TYPES)


def event_from_map(document: dict[str, Any]) -> RaceEvent:
    """A race event from its map (as stored in the race's event stream); raises :class:`ProtocolError`."""
    return _decode(document, EVENT_TYPES)


M = TypeVar("M", bound=Message)


def _decode(document: dict[str, Any], registry: dict[str, type[M]]) -> M:
    request_id = document.get("id")
    request_id = request_id if isinstance(request_id, int) and not isinstance(request_id, bool) and 0 <= request_id <= MAX_REQUEST_ID else None
    kind = document.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(ErrorCode.BAD_FIELD, "every frame needs a string field 'type'", field="type", request_id=request_id)
    cls = registry.get(kind)
    if cls is None:
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown message type {kind[:40]!r}", field="type", request_id=request_id)
    try:
        return from_map(cls, document)
    except ProtocolError as error:
        error.request_id = request_id
        raise


T = TypeVar("T")


def from_map(cls: type[T], document: dict[str, Any], prefix: str = "") -> T:
    """An instance of dataclass ``cls`` from a map, checking every field's type and limits.

    Unknown keys are ignored; a missing field that may be nil is nil.
    """
    hints = _hints(cast(Any, cls))
    values: dict[str, Any] = {}
    for spec in fields(cls):  # type: ignore[arg-type]
        name = prefix + spec.name
        if spec.name not in document:
            if spec.default is MISSING and spec.default_factory is MISSING:
                if type(None) not in get_args(hints[spec.name]):
                    raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} is missing", field=name)
                values[spec.name] = None
            continue
        values[spec.name] = _check(document[spec.name], hints[spec.name], name, spec.metadata)
    return cls(**values)


@cache
def _hints(cls: Any) -> dict[str, Any]:
    return get_type_hints(cls)


def _check(value: Any, hint: Any, name: str, limits: Any) -> Any:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = get_args(hint)
        if value is None and type(None) in options:
            return None
        (inner,) = [option for option in options if option is not type(None)]
        return _check(value, inner, name, limits)
    if origin is list:
        if not isinstance(value, list):
            raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must be a list", field=name)
        (item_hint,) = get_args(hint)
        return [_check(item, item_hint, f"{name}[{index}]", {}) for index, item in enumerate(value)]
    if hint is bool:
        if not isinstance(value, bool):
            raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must be true or false", field=name)
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must be an integer", field=name)
        low, high = limits.get("low"), limits.get("high")
        if (low is not None and value < low) or (high is not None and value > high):
            raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must be from {low} to {high}", field=name)
        return value
    if hint is str:
        if not isinstance(value, str):
            raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must be a string", field=name)
        max_len = limits.get("max_len")
        if max_len is not None and not 1 <= len(value) <= max_len:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must have 1 to {max_len} characters", field=name)
        return value
    if hint is RaceEvent:
        if not isinstance(value, dict):
            raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must be a map", field=name)
        return _decode(value, EVENT_TYPES)
    if isinstance(hint, type) and hasattr(hint, "__dataclass_fields__"):
        if not isinstance(value, dict):
            raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must be a map", field=name)
        return from_map(hint, value, prefix=name + ".")
    raise TypeError(f"unsupported field type {hint!r}")  # a bug in a message declaration
