"""Every request a client sends, and the table of request types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Final

from shared.protocol.base import RaceRequest, Request, SessionRequest, bounded, message_types
from shared.protocol.codes import (
    MAX_ARENA_ID_LEN,
    MAX_ARENA_MINUTES,
    MAX_ARENA_PLAYERS,
    MAX_ARENA_STARTS_IN_SECONDS,
    MAX_ATTEMPT_ID_LEN,
    MAX_CURSOR_LEN,
    MAX_DAILY_PAGE,
    MAX_DAY_LEN,
    MAX_HANDLE_LEN,
    MAX_HISTORY_PAGE,
    MAX_INVITE_LEN,
    MAX_LEADERBOARD_PAGE,
    MAX_LIST_LIMIT,
    MAX_MOVE_ID_LEN,
    MAX_MOVE_TEXT_LEN,
    MAX_NAME_LEN,
    MAX_PASSWORD_LEN,
    MAX_RACE_ID_LEN,
    MAX_REPLAY_PAGE,
    MAX_SPECTATOR_DELAY_SECONDS,
    MAX_TOKEN_LEN,
)
from shared.protocol.records import RaceSettings
from shared.protocol.states import Emote, GhostSource


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
    accept_delay: int | None = bounded(low=0, high=MAX_SPECTATOR_DELAY_SECONDS, default=None)
    """The spectator delay (seconds) the joiner accepts when a private race's is below the server's minimum."""


@dataclass(frozen=True, slots=True)
class JoinInvite(SessionRequest):
    """Take the second seat of a private race by its invite code."""

    TYPE: ClassVar[str] = "join_invite"
    code: str = bounded(max_len=MAX_INVITE_LEN)
    accept_delay: int | None = bounded(low=0, high=MAX_SPECTATOR_DELAY_SECONDS, default=None)
    """The spectator delay (seconds) the joiner accepts when the race's is below the server's minimum; a race
    with a lower delay is refused ``delay_not_accepted`` (its ``expected``: the race's delay in seconds)."""


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
class EmoteRequest(RaceRequest):
    """A player sends the opponent one of the fixed phrases (``emote`` event), from the countdown to after the result."""

    TYPE: ClassVar[str] = "emote"
    phrase: Emote = bounded()  # noqa: RUF009 - required on the wire (no default); bounded() only satisfies the dataclass order


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



# --- accounts, ratings, history (docs/PROTOCOL.md "Accounts and ratings") --------------------------


@dataclass(frozen=True, slots=True)
class Register(SessionRequest):
    """Register a handle and log this session in to it: with a password, or as a bot (the server makes a key)."""

    TYPE: ClassVar[str] = "register"
    handle: str = bounded(max_len=MAX_HANDLE_LEN)
    password: str | None = bounded(max_len=MAX_PASSWORD_LEN, default=None)
    """8 to 128 characters; nil for a bot."""
    bot: bool = False
    """A bot account: the reply's ``key`` is its password, shown once."""


@dataclass(frozen=True, slots=True)
class Login(SessionRequest):
    """Log this session in to a registered account (a bot logs in with its key as the password)."""

    TYPE: ClassVar[str] = "login"
    handle: str = bounded(max_len=MAX_HANDLE_LEN)
    password: str = bounded(max_len=MAX_PASSWORD_LEN)


@dataclass(frozen=True, slots=True)
class Logout(SessionRequest):
    """End this session: its token stops working at once, everywhere (the connection must say ``hello`` again)."""

    TYPE: ClassVar[str] = "logout"


@dataclass(frozen=True, slots=True)
class ChangePassword(SessionRequest):
    """Change the password of the account this session is logged in to; every other session of the account ends."""

    TYPE: ClassVar[str] = "change_password"
    password: str = bounded(max_len=MAX_PASSWORD_LEN)
    """The current password."""
    new_password: str = bounded(max_len=MAX_PASSWORD_LEN)
    """8 to 128 characters."""


@dataclass(frozen=True, slots=True)
class LeaderboardRequest(SessionRequest):
    """The best-rated established players of a profile, and the asker's own rank."""

    TYPE: ClassVar[str] = "leaderboard"
    profile: str = "classic"
    limit: int = bounded(low=1, high=MAX_LEADERBOARD_PAGE, default=20)
    offset: int = bounded(low=0, high=2**31, default=0)
    after: str | None = bounded(max_len=MAX_CURSOR_LEN, default=None)
    """The page after this cursor (a reply's ``next``: no rows skipped, unlike ``offset``); nil: from ``offset``."""


@dataclass(frozen=True, slots=True)
class HistoryRequest(SessionRequest):
    """A player's finished races, newest first, page by page."""

    TYPE: ClassVar[str] = "history"
    handle: str | None = bounded(max_len=MAX_HANDLE_LEN, default=None)
    """Whose history; nil: this session's account."""
    offset: int = bounded(low=0, high=2**31, default=0)
    limit: int = bounded(low=1, high=MAX_HISTORY_PAGE, default=20)
    before: str | None = bounded(max_len=MAX_CURSOR_LEN, default=None)
    """The races older than this cursor (a reply's ``next``: no rows skipped, unlike ``offset``); nil: from ``offset``."""


@dataclass(frozen=True, slots=True)
class StatsRequest(SessionRequest):
    """A player's statistics and ratings per profile."""

    TYPE: ClassVar[str] = "stats"
    handle: str | None = bounded(max_len=MAX_HANDLE_LEN, default=None)
    """Whose; nil: this session's account."""


@dataclass(frozen=True, slots=True)
class OnlineRequest(SessionRequest):
    """How many players are online and racing now, over every server process (the lobby's line)."""

    TYPE: ClassVar[str] = "online"


BOT_LEVELS = range(1, 6)
"""The practice bot's levels (docs/PLAYERS.md)."""


@dataclass(frozen=True, slots=True)
class SummonBot(RaceRequest):
    """Have the server seat one of its practice bots in the asker's waiting race (the creator's, on this connection)."""

    TYPE: ClassVar[str] = "summon_bot"
    level: int = bounded(low=BOT_LEVELS.start, high=BOT_LEVELS.stop - 1, default=3)


@dataclass(frozen=True, slots=True)
class GetAnalysis(RaceRequest):
    """The post-race analysis of a finished race (``not_finished`` while it runs: never during a race)."""

    TYPE: ClassVar[str] = "get_analysis"


MAX_LINE_ACTIONS = 1000
"""The most actions one player's line has (the server's per-attempt action limit, ``too_many_moves``)."""


@dataclass(frozen=True, slots=True)
class SolveFrom(RaceRequest):
    """A winning line from a point of a finished race's player line, found by the server's solver (docs/PROTOCOL.md
    "solve_from"): ``not_finished`` while the race runs, to anyone."""

    TYPE: ClassVar[str] = "solve_from"
    slot: int = bounded(low=0, high=1)
    """Whose line: the seat (0 the creator, 1 the joiner)."""
    actions: int = bounded(low=0, high=MAX_LINE_ACTIONS)
    """The position after this many of the player's actions (0: the deal), undos and a redeal included."""


@dataclass(frozen=True, slots=True)
class GhostRace(SessionRequest):
    """Race a ghost: a recorded attempt replayed at its pace in the second seat of a new private, never rated race on
    the same deal (docs/COMMUNITY.md "Ghost races"); replied ``seated``, the countdown starts at once."""

    TYPE: ClassVar[str] = "ghost_race"
    source: GhostSource = GhostSource.DAILY
    day: str | None = bounded(max_len=MAX_DAY_LEN, default=None)
    """``daily``: the day (over)."""
    handle: str | None = bounded(max_len=MAX_HANDLE_LEN, default=None)
    """``daily``: whose counted attempt; nil: one's own."""
    race: str | None = bounded(max_len=MAX_RACE_ID_LEN, default=None)
    """``race``: the finished race."""
    slot: int = bounded(low=0, high=1, default=0)
    """``race``: whose line (its seat)."""


# --- arena tournaments (docs/COMMUNITY.md) --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ArenaCreate(SessionRequest):
    """Open a private arena tournament (registered players), starting now or ``starts_in`` seconds from now."""

    TYPE: ClassVar[str] = "arena_create"
    name: str = bounded(max_len=MAX_NAME_LEN)
    minutes: int = bounded(low=1, high=MAX_ARENA_MINUTES, default=20)
    """How long new races are paired."""
    time_limit: int = bounded(low=10, high=3600, default=300)
    """Seconds of each race."""
    rated: bool = False
    """Its races change the players' classic ratings."""
    private: bool = True
    """Joined by its link only, never listed (a player's arena must be private: listed ones are the operator's)."""
    max_players: int | None = bounded(low=2, high=MAX_ARENA_PLAYERS, default=None)
    """The most players who may join; nil: no cap."""
    starts_in: int = bounded(low=0, high=MAX_ARENA_STARTS_IN_SECONDS, default=0)
    """Seconds from now to its start (players may join before)."""


@dataclass(frozen=True, slots=True)
class ArenaJoin(SessionRequest):
    """Join an arena (or come back after a pause): paired with the free player of the closest score from then on;
    this connection receives ``arena_paired`` and ``arena_standings``."""

    TYPE: ClassVar[str] = "arena_join"
    arena: str = bounded(max_len=MAX_ARENA_ID_LEN)


@dataclass(frozen=True, slots=True)
class ArenaPause(SessionRequest):
    """Stop being paired in an arena (a race under way still counts); ``arena_join`` again to come back."""

    TYPE: ClassVar[str] = "arena_pause"
    arena: str = bounded(max_len=MAX_ARENA_ID_LEN)


@dataclass(frozen=True, slots=True)
class ArenaBerserk(SessionRequest):
    """Go berserk in one's next arena race before it starts: half the time limit, one point more for a win with at
    least 7 moves (``berserk_too_late`` once the countdown is over)."""

    TYPE: ClassVar[str] = "arena_berserk"
    arena: str = bounded(max_len=MAX_ARENA_ID_LEN)
    race: str = bounded(max_len=MAX_RACE_ID_LEN)


@dataclass(frozen=True, slots=True)
class ArenaWatch(SessionRequest):
    """Follow an arena without playing: this connection is sent ``arena_standings`` (the top of the table) from
    now on, at most once a second; ``arena_unwatch`` or closing the connection stops it."""

    TYPE: ClassVar[str] = "arena_watch"
    arena: str = bounded(max_len=MAX_ARENA_ID_LEN)


@dataclass(frozen=True, slots=True)
class ArenaUnwatch(SessionRequest):
    """Stop following an arena one watches (a player's own pushes, after ``arena_join``, stop with ``arena_pause``)."""

    TYPE: ClassVar[str] = "arena_unwatch"
    arena: str = bounded(max_len=MAX_ARENA_ID_LEN)


@dataclass(frozen=True, slots=True)
class ArenaList(SessionRequest):
    """The listed arenas: upcoming, running and the newest finished ones (private arenas are never listed)."""

    TYPE: ClassVar[str] = "arena_list"


@dataclass(frozen=True, slots=True)
class ArenaStandingsRequest(SessionRequest):
    """An arena and its standings, to anyone."""

    TYPE: ClassVar[str] = "arena_standings_request"
    arena: str = bounded(max_len=MAX_ARENA_ID_LEN)


@dataclass(frozen=True, slots=True)
class ArenaRecordRequest(SessionRequest):
    """An arena's record, to anyone: its table, each player's races and the servers' signature, which
    ``flowergarden verify`` checks (docs/FAIRPLAY.md "What verify proves")."""

    TYPE: ClassVar[str] = "arena_record"
    arena: str = bounded(max_len=MAX_ARENA_ID_LEN)


# --- the daily deal (docs/COMMUNITY.md) ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DailyRequest(SessionRequest):
    """A day's daily deal: its commitment and times; once the day is over its seed, the solver's line, the top of
    its leaderboard and its statistics; and the asker's own attempt and streak."""

    TYPE: ClassVar[str] = "daily"
    day: str | None = bounded(max_len=MAX_DAY_LEN, default=None)
    """``YYYY-MM-DD`` (UTC); nil: today."""


@dataclass(frozen=True, slots=True)
class DailyStart(SessionRequest):
    """Start (or resume) an attempt at a day's deal: today's is a registered player's one counted attempt (a guest's
    is uncounted); a past day's is always uncounted and may be played again and again."""

    TYPE: ClassVar[str] = "daily_start"
    day: str | None = bounded(max_len=MAX_DAY_LEN, default=None)
    """``YYYY-MM-DD``; nil: today."""


@dataclass(frozen=True, slots=True)
class DailyMove(SessionRequest):
    """One move of a daily attempt (undo and the redeal are off)."""

    TYPE: ClassVar[str] = "daily_move"
    attempt: str = bounded(max_len=MAX_ATTEMPT_ID_LEN)
    seq: int = bounded(low=0, high=MAX_LINE_ACTIONS)
    """The number of moves made before this one (a resent move is answered ``out_of_sequence``)."""
    move: str = bounded(max_len=MAX_MOVE_TEXT_LEN)


@dataclass(frozen=True, slots=True)
class DailyStop(SessionRequest):
    """End a daily attempt where it stands (``resigned``): its foundation count is its result."""

    TYPE: ClassVar[str] = "daily_stop"
    attempt: str = bounded(max_len=MAX_ATTEMPT_ID_LEN)


@dataclass(frozen=True, slots=True)
class DailyBoardRequest(SessionRequest):
    """A finished day's leaderboard, page by page, with its statistics (``daily_not_over`` before its end)."""

    TYPE: ClassVar[str] = "daily_board"
    day: str = bounded(max_len=MAX_DAY_LEN)
    offset: int = bounded(low=0, high=2**31, default=0)
    limit: int = bounded(low=1, high=MAX_DAILY_PAGE, default=20)


@dataclass(frozen=True, slots=True)
class DailyReplayRequest(SessionRequest):
    """One counted attempt of a day, move by move with its times: anyone's once the day is over, one's own before."""

    TYPE: ClassVar[str] = "daily_replay"
    day: str = bounded(max_len=MAX_DAY_LEN)
    handle: str | None = bounded(max_len=MAX_HANDLE_LEN, default=None)
    """Whose; nil: this session's own."""


@dataclass(frozen=True, slots=True)
class DailyArchiveRequest(SessionRequest):
    """The past days, newest first, each with the asker's own counted attempt (the calendar) and its streaks."""

    TYPE: ClassVar[str] = "daily_archive"
    offset: int = bounded(low=0, high=2**31, default=0)
    limit: int = bounded(low=1, high=MAX_DAILY_PAGE, default=31)


REQUEST_TYPES: Final[dict[str, type[Request]]] = message_types(globals(), Request)
"""Every request of protocol v1, by its ``type`` (each class above with a ``TYPE``)."""
