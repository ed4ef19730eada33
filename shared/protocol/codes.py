"""Protocol v1 constants of the wire contract: the version, the field limits, error and close codes.

These values are promised to clients in docs/PROTOCOL.md; server policy (how many races a connection may watch,
rate limits) lives in ``server/``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

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
MAX_HANDLE_LEN: Final = 20
MAX_PASSWORD_LEN: Final = 128
MAX_LEADERBOARD_PAGE: Final = 100
MAX_HISTORY_PAGE: Final = 50
MAX_GHOST_LABEL_LEN: Final = 64
"""A ghost race's label (``settings.ghost``)."""
MAX_ARENA_ID_LEN: Final = 16
MAX_ARENA_MINUTES: Final = 180
MAX_ARENA_PLAYERS: Final = 10_000
"""The most players one arena may be capped at (``max_players``)."""
MAX_ARENA_STARTS_IN_SECONDS: Final = 7 * 86_400
"""How far ahead an arena may be opened (``starts_in``)."""
MAX_DAY_LEN: Final = 10
"""A daily deal's day, ``YYYY-MM-DD`` (UTC)."""
MAX_ATTEMPT_ID_LEN: Final = 48
MAX_DAILY_PAGE: Final = 100
"""Most lines one ``daily_board`` or ``daily_archive`` reply carries."""
MAX_CURSOR_LEN: Final = 128
"""Longest page cursor (``leaderboard``'s ``after``, ``history``'s ``before``)."""
OVERLOAD_RETRY_SECONDS: Final = 5
"""The retry-after an ``overloaded`` refusal carries (in ``expected``)."""


class ErrorCode(StrEnum):
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
    """The store (or its driver) failed: the change may or may not have been applied; resend it as it was (same
    ``move_id`` and ``seq``), a stored one is answered as a duplicate."""
    SPECTATING = "spectating"
    """This connection watches the race: it cannot act in it (move, resign, stuck)."""
    NOT_FINISHED = "not_finished"
    """A replay (watch the race instead) or a ``rematch`` of a race that has no result yet."""
    EMOTE_LIMIT = "emote_limit"
    """``emote`` past the connection's budget (3 at once, then one every 5 s): nothing was sent; wait a little."""
    WATCH_LIMIT = "watch_limit"
    """The connection already watches as many races as the server allows (16 by default); unwatch one first."""
    SEED_POOL_EMPTY = "seed_pool_empty"
    """No solver-proven deal is ready for ``solvable_only``; nothing was created, retry in a few seconds."""
    UNKNOWN_INVITE = "unknown_invite"
    """No race waiting for its second player has this invite code."""
    INVITE_REQUIRED = "invite_required"
    """``join`` of a private race waiting for its second player: its seat is taken only with its invite code
    (``join_invite``); the race id is its watch link."""
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
    NO_SPECTATORS = "no_spectators"
    """The race's players chose ``spectators: nobody``: it cannot be watched, and only they may replay it."""
    BANNED = "banned"
    """``hello`` of a player an operator banned; the message gives the reason and when the ban ends."""
    SERVER_DRAINING = "server_draining"
    """This server process is draining for maintenance: it finishes the races under way but seats no one in a new
    race. Reconnect (to another process) to create, join or match."""
    SERVER_BUSY = "server_busy"
    """``login``/``register``: as many password checks as this server process queues are waiting already; nothing was
    done (it counts as no failed login): try again in a few seconds."""
    OVERLOADED = "overloaded"
    """This server process is past its capacity (its store commands queue behind it): it refuses new races and
    spectators so the races under way keep being served (their moves are acknowledged late, never refused);
    ``expected`` is how many seconds to wait before asking again."""
    WEAK_PASSWORD = "weak_password"
    """``register``/``change_password``: the password is all blank, one character repeated, or one of the commonest
    passwords (``field`` names it); choose another."""
    HANDLE_TAKEN = "handle_taken"
    """``register``: the handle is registered already (handles are unique regardless of case)."""
    BAD_CREDENTIALS = "bad_credentials"
    """``login``: no account has this handle and password (which of the two is wrong is never told)."""
    ACCOUNT_REQUIRED = "account_required"
    """A rated race needs both players logged in to a registered account."""
    RATED_BUSY = "rated_busy"
    """A rated race could not start: one of its players is playing another rated race."""
    RATED_SAME_NETWORK = "rated_same_network"
    """A rated race could not start: both accounts were seen on the same client address (IPv4, IPv6 /64) within
    the server's window (docs/PLAYERS.md "Ladder rules"). Play them unrated."""
    RATED_PAIR_LIMIT = "rated_pair_limit"
    """A rated race could not start: these two accounts played the server's most rated races against each other
    in the last day; ``expected`` is that number."""
    UNKNOWN_ACCOUNT = "unknown_account"
    """``history``/``stats`` of a handle nobody registered."""
    DELAY_NOT_ACCEPTED = "delay_not_accepted"
    """A private race's spectator delay is below the server's minimum and the joiner did not accept it:
    ``expected`` is the race's delay in seconds; join again with ``accept_delay`` set to it."""
    UNKNOWN_ARENA = "unknown_arena"
    """No arena tournament has that id."""
    ARENA_OVER = "arena_over"
    """``arena_join`` after the arena's clock ran out: no new race is paired."""
    ARENA_FULL = "arena_full"
    """``arena_join`` of an arena that has its ``max_players`` already (``expected``: that number)."""
    BERSERK_TOO_LATE = "berserk_too_late"
    """``arena_berserk`` once the race's countdown is over: berserk is chosen before the start only."""
    DAILY_NOT_OVER = "daily_not_over"
    """The day of that daily deal is not over: its leaderboard, its statistics and everybody's attempts but your own
    stay hidden until it is (``expected``: the server time, ms, at which it ends)."""
    DAILY_ATTEMPT_USED = "daily_attempt_used"
    """``daily_start`` of today's deal by a registered player whose one counted attempt has ended (play a past day
    of the archive instead, uncounted)."""
    UNKNOWN_DAY = "unknown_day"
    """No daily deal for that day: before the first, in the future, or not a ``YYYY-MM-DD`` day."""
    UNKNOWN_ATTEMPT = "unknown_attempt"
    """No attempt of this session has that id (``daily_move``, ``daily_stop``), or no such attempt to replay."""


AnyErrorCode = ErrorCode | IllegalMoveCode | NotationErrorCode
"""A code an ``error`` can carry: the protocol's own, or one of the engine's."""

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
    KICKED: Final = 4000
    """An operator closed the connection; the reason says why. A client may reconnect (unless it was banned)."""


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
