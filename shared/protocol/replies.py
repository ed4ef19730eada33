"""The server's replies to requests (each echoes the request's ``id``) and its other non-event messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final

from shared.board import Status
from shared.protocol.base import Message, message_types
from shared.protocol.events import RaceEvent
from shared.protocol.lobby import LobbyEntry
from shared.protocol.records import (
    ArenaInfo,
    ArenaLine,
    ArenaPlayerRecord,
    BoardView,
    DailyDay,
    DailyEntry,
    DailyResult,
    DailyStats,
    DealLayout,
    HistoryItem,
    LeaderboardEntry,
    ProfileStats,
    RaceAnalysis,
    RaceInfo,
    RatingInfo,
)
from shared.protocol.states import ArenaStatus, Difficulty, RaceStatus


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
    account: str | None = None
    """The handle of the account this session is logged in to (a resumed session stays logged in); nil: anonymous."""
    bot: bool = False


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
    status: Status
    """The engine's status of the player's position: ``playing``, ``won``, ``blocked`` or ``dead``."""
    undos: int
    duplicate: bool
    """True when this ``move_id`` had already been applied; nothing was applied again."""
    columns: list[list[str]] | None = None
    """For a ``redeal``: the six columns it dealt (the seed that decides them is hidden until the result)."""


@dataclass(frozen=True, slots=True)
class Ok(Message):
    """Reply to ``resign``, ``stuck``, ``unwatch``, ``leave``, ``rematch`` (an offer), ``unwatch_lobby``,
    ``cancel_quick_match``, ``logout`` and ``change_password``."""

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
    redeal_columns: list[list[str]] | None = None
    """When ``moves`` include a ``redeal``: the columns it dealt (replay needs them; the seed is hidden)."""
    deal: DealLayout | None = None
    """The layout dealt (nil before the countdown): replay ``moves`` on it."""


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
    deal: DealLayout | None = None
    """The layout dealt (nil before the countdown): each board's ``moves`` replay on it."""
    status_now: RaceStatus | None = None
    """The race's status at the reply (``race.status`` is as of ``as_of``): so a spectator of a race that started or
    finished within the delay is told so; no secret (``live_races`` lists races under way, a finished race replays)."""


@dataclass(frozen=True, slots=True)
class ReplayPage(Message):
    """Reply to ``replay``: the race's final state and up to ``limit`` events after ``after``, with every detail."""

    TYPE: ClassVar[str] = "replay_page"
    id: int
    race: RaceInfo
    events: list[RaceEvent]
    complete: bool
    """True when the page reaches the race's last event (the ``result``)."""
    signature: str | None = None
    """On the complete page: the servers' Ed25519 signature (hex) of the record these pages make (``race`` and every
    event, canonical JSON: docs/FAIRPLAY.md "What verify proves"); nil on other pages."""


@dataclass(frozen=True, slots=True)
class AnalysisReport(Message):
    """Reply to ``get_analysis``: the finished race's analysis, or nil while the background worker computes it
    (an ``analysis`` event follows when it is ready)."""

    TYPE: ClassVar[str] = "analysis_report"
    id: int
    race: str
    analysis: RaceAnalysis | None


@dataclass(frozen=True, slots=True)
class Solution(Message):
    """Reply to ``solve_from``: the solver's verdict on that position of the player's line and, when ``solved``, a
    line of moves that wins from it (empty for a position already won)."""

    TYPE: ClassVar[str] = "solution"
    id: int
    race: str
    slot: int
    actions: int
    verdict: str
    """``solved``, ``unsolvable`` (proven: no plain moves win) or ``unknown`` (budget spent, or only a redeal still
    unused could save it: the solver searches plain moves)."""
    line: list[str]
    """Stored notation, to play from that position; empty unless ``solved``."""
    budget_ms: int
    """The solver time the server allows such a request (ms)."""
    cached: bool
    """True when the answer came from the server's cache (an earlier request for the same position)."""


@dataclass(frozen=True, slots=True)
class ServerShutdown(Message):
    """Sent once before a graceful shutdown closes the connection (1001): reconnect, ``hello`` with the token, ``sync``."""

    TYPE: ClassVar[str] = "server_shutdown"
    message: str


@dataclass(frozen=True, slots=True)
class Notice(Message):
    """An operator's announcement to every connected client (e.g. "restart in 5 minutes"); show it to the user."""

    TYPE: ClassVar[str] = "notice"
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
    """For ``out_of_sequence``: the ``seq`` the server expects; for ``overloaded``: seconds to wait before retrying."""


# --- accounts, ratings, history -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AccountReply(Message):
    """Reply to ``register`` and ``login``: the session is now logged in to this account."""

    TYPE: ClassVar[str] = "account"
    id: int
    handle: str
    """As registered (its case is kept; matching ignores case)."""
    player: str
    """The account's player id: the same on every session logged in to it."""
    name: str
    """The session's display name from now on: the handle."""
    bot: bool
    token: str
    """The session's new token (a fresh one at every ``register`` and ``login``: the one it had before ends)."""
    key: str | None = None
    """``register`` of a bot: its secret key (the password to log in with). Shown once, never again."""


@dataclass(frozen=True, slots=True)
class Leaderboard(Message):
    """Reply to ``leaderboard``: entries ``offset+1`` to ``offset+limit`` of the established players by rating."""

    TYPE: ClassVar[str] = "leaderboard"
    id: int
    profile: str
    entries: list[LeaderboardEntry]
    total: int
    """How many players the leaderboard lists."""
    own: LeaderboardEntry | None = None
    """The asker's own line (nil: anonymous, or not on the leaderboard, e.g. still provisional)."""
    own_rating: RatingInfo | None = None
    """The asker's rating even when provisional (nil: no rated race yet, or anonymous)."""
    next: str | None = None
    """The cursor of the next page (the request's ``after``); nil: this is the last page."""


@dataclass(frozen=True, slots=True)
class History(Message):
    """Reply to ``history``."""

    TYPE: ClassVar[str] = "history"
    id: int
    handle: str
    items: list[HistoryItem]
    total: int
    """How many finished races the history holds."""
    next: str | None = None
    """The cursor of the next page (the request's ``before``); nil: this is the last page."""


@dataclass(frozen=True, slots=True)
class Stats(Message):
    """Reply to ``stats``: one entry per profile the player raced in."""

    TYPE: ClassVar[str] = "stats"
    id: int
    handle: str
    bot: bool
    profiles: list[ProfileStats]


@dataclass(frozen=True, slots=True)
class Online(Message):
    """Reply to ``online``: players with an open connection (``online``) and, of them, those seated in a race that has
    both its players (``racing``), summed over every server process; at most a few seconds old."""

    TYPE: ClassVar[str] = "online"
    id: int
    online: int
    racing: int


# --- arena tournaments (docs/COMMUNITY.md) --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ArenaReply(Message):
    """Reply to ``arena_create``, ``arena_join`` and ``arena_standings_request``: the arena and its standings."""

    TYPE: ClassVar[str] = "arena"
    id: int
    arena: ArenaInfo
    standings: list[ArenaLine]


@dataclass(frozen=True, slots=True)
class ArenaPaired(Message):
    """Pushed to a joined player's connections: its next race of the arena; ``sync`` it to take the seat (the
    countdown runs already)."""

    TYPE: ClassVar[str] = "arena_paired"
    arena: str
    race: str
    slot: int


@dataclass(frozen=True, slots=True)
class ArenaStandings(Message):
    """Pushed to the arena's joined and watching connections after a pairing or a result, at most once a second:
    the top of the table, and the player's own line."""

    TYPE: ClassVar[str] = "arena_standings"
    arena: str
    standings: list[ArenaLine]
    """The first lines (at most :data:`ARENA_TOP`); the whole table: ``arena_standings_request``."""
    own: ArenaLine | None = None
    """The receiving player's own line (nil for a spectator, or a player not in the table)."""
    players: int = 0
    """How many lines the whole table has."""
    status: ArenaStatus = ArenaStatus.RUNNING
    races: int = 0
    """Races under way: once ``finished`` with none left, the table is final (its first three are the podium)."""


ARENA_TOP: Final = 10
"""The lines of the table an ``arena_standings`` push carries."""


@dataclass(frozen=True, slots=True)
class ArenaListReply(Message):
    """Reply to ``arena_list``: the listed arenas, each list soonest (upcoming, running) or newest (finished) first."""

    TYPE: ClassVar[str] = "arenas"
    id: int
    upcoming: list[ArenaInfo]
    running: list[ArenaInfo]
    finished: list[ArenaInfo]
    """The newest :data:`ARENA_FINISHED_LISTED` finished ones."""


ARENA_FINISHED_LISTED: Final = 20
"""How many finished arenas ``arena_list`` carries."""


@dataclass(frozen=True, slots=True)
class ArenaRecordReply(Message):
    """Reply to ``arena_record``: the arena, whether its table is final, each player's races and the standings they
    make, signed (shared/arena_record.py says what is signed and how ``verify`` checks it)."""

    TYPE: ClassVar[str] = "arena_record"
    id: int
    arena: ArenaInfo
    final: bool
    """True once the clock ran out and every race under way has been booked: the table no longer changes."""
    players: list[ArenaPlayerRecord]
    standings: list[ArenaLine]
    signature: str | None = None
    """The servers' Ed25519 signature (hex) of the record's digest; nil on a server that signs no records."""


# --- the daily deal (docs/COMMUNITY.md) ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Daily(Message):
    """Reply to ``daily``: one day's deal. The seed, salt and solver's line, the top of the leaderboard and the
    statistics are nil (empty) until the day is over; the commitment is published from the day's start."""

    TYPE: ClassVar[str] = "daily_info"
    id: int
    day: str
    profile: str
    difficulty: Difficulty | None
    time_limit: int
    """Seconds an attempt may last (it ends at the day's end at the latest)."""
    commitment: str
    """SHA-256 (hex) committing to the deal, as a race's (docs/PROTOCOL.md "Fair deals")."""
    opens_at: int
    closes_at: int
    """Server time (ms) at which the day ends: the reveal."""
    over: bool
    seed: int | None = None
    salt: str | None = None
    proving_line: list[str] | None = None
    """The solver's winning line, which the commitment includes."""
    own: DailyResult | None = None
    """The asker's counted attempt of that day (a guest's attempt of today's deal, uncounted)."""
    streak: int = 0
    """Days in a row, up to today or yesterday, with a counted clear (registered players)."""
    best_streak: int = 0
    top: list[DailyEntry] | None = None
    """The first lines of the leaderboard, once the day is over."""
    stats: DailyStats | None = None


@dataclass(frozen=True, slots=True)
class DailyAttempt(Message):
    """Reply to ``daily_start``: the attempt, the deal's layout (never its seed before the day is over) and what
    was played so far (a resumed attempt)."""

    TYPE: ClassVar[str] = "daily_attempt"
    id: int
    attempt: str
    day: str
    counted: bool
    columns: list[list[str]]
    bouquet: list[str]
    started_at: int
    deadline: int
    """Server time (ms) at which the attempt ends by itself: its time limit or the day's end."""
    moves: list[str]
    result: DailyResult
    now: int
    """Server time (ms) of this reply: the clock ``started_at`` and ``deadline`` are on (count the time left from it)."""


@dataclass(frozen=True, slots=True)
class DailyMoved(Message):
    """Reply to ``daily_move`` and ``daily_stop``: the attempt after the move (``result.state`` tells if it ended)."""

    TYPE: ClassVar[str] = "daily_moved"
    id: int
    attempt: str
    seq: int
    """Moves made so far."""
    result: DailyResult


@dataclass(frozen=True, slots=True)
class DailyBoard(Message):
    """Reply to ``daily_board``: lines ``offset+1`` to ``offset+limit`` of a finished day's leaderboard."""

    TYPE: ClassVar[str] = "daily_board_page"
    id: int
    day: str
    entries: list[DailyEntry]
    total: int
    stats: DailyStats
    own: DailyEntry | None = None
    """The asker's own line (nil: no counted attempt that day)."""


@dataclass(frozen=True, slots=True)
class DailyReplay(Message):
    """Reply to ``daily_replay``: an attempt's layout and moves with their times (ms from its start)."""

    TYPE: ClassVar[str] = "daily_replay_page"
    id: int
    day: str
    handle: str | None
    columns: list[list[str]]
    bouquet: list[str]
    moves: list[str]
    times: list[int]
    """When each move was made, ms after the attempt's start."""
    result: DailyResult


@dataclass(frozen=True, slots=True)
class DailyArchive(Message):
    """Reply to ``daily_archive``: past days, newest first, and the asker's streaks."""

    TYPE: ClassVar[str] = "daily_days"
    id: int
    days: list[DailyDay]
    total: int
    streak: int = 0
    best_streak: int = 0


REPLY_TYPES: Final[dict[str, type[Message]]] = message_types(globals(), Message)
"""Every reply (and ``error``, ``notice``, ``server_shutdown``), by its ``type`` (each class above with a ``TYPE``)."""
