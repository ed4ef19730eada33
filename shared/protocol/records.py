"""The records nested in messages: race settings, a seat, a race, a board, a final standing."""

from __future__ import annotations

from dataclasses import dataclass

from shared.board import Status
from shared.protocol.base import bounded
from shared.protocol.codes import (
    MAX_ARENA_ID_LEN,
    MAX_GHOST_LABEL_LEN,
    MAX_GRACE_SECONDS,
    MAX_SEED,
    MAX_SPECTATOR_DELAY_SECONDS,
    MAX_TIME_LIMIT_SECONDS,
)
from shared.protocol.states import (
    AbortReason,
    ArenaStatus,
    AttemptState,
    Difficulty,
    LineVerdict,
    Outcome,
    RaceStatus,
    ResultReason,
    Spectators,
)


@dataclass(frozen=True, slots=True)
class RaceSettings:
    """How a race is played and who may watch it; chosen by its creator."""

    profile: str = "classic"
    """``classic`` or ``foundation-only``."""
    undo: bool = False
    redeal_once: bool = False
    time_limit: int | None = bounded(low=1, high=MAX_TIME_LIMIT_SECONDS, default=None)
    """Seconds from the start after which every attempt still running ends; None for no limit."""
    seed: int | None = bounded(low=0, high=MAX_SEED, default=None)
    """A fixed deal; None lets the server draw one at random."""
    spectator_delay: int | None = bounded(low=0, high=MAX_SPECTATOR_DELAY_SECONDS, default=None)
    """Seconds spectators lag behind the race (fair play); None: the server's default. Never below the server's minimum,
    except in a private race whose joiner accepts the lower delay (``accept_delay`` of ``join_invite``)."""
    grace: int | None = bounded(low=1, high=MAX_GRACE_SECONDS, default=None)
    """Seconds a disconnected player keeps its seat before its attempt ends as abandoned; None: the server's default."""
    solvable_only: bool = False
    """Deal only a seed the solver proved winnable (from the server's pool); not together with ``seed``."""
    private: bool = False
    """Never listed in the lobby; the creator gets an invite code to share (``join_invite``)."""
    spectators: Spectators | None = None
    """Who may watch; None: ``link`` for a private race, ``anyone`` otherwise. Replies carry the value in force."""
    rated: bool = False
    """Both players' ratings change with the result: registered accounts only, a server-chosen deal, no undo."""
    difficulty: Difficulty | None = None
    """With ``solvable_only``: deal a proven seed of this tier (``easy``, ``medium`` or ``hard``); None: any."""
    ghost: str | None = bounded(max_len=MAX_GHOST_LABEL_LEN, default=None)
    """A ghost race (``ghost_race``): whose recorded attempt the second seat replays, e.g. ``daily 2026-12-01 Ann``.
    Set by the server only (a ``create`` or ``quick_match`` that sets it is ``bad_field``); never rated."""
    arena: str | None = bounded(max_len=MAX_ARENA_ID_LEN, default=None)
    """An arena tournament's race: the arena's id (set by the server's pairing only; a ``create`` or
    ``quick_match`` that sets it is ``bad_field``)."""
    hints: bool = False
    """Both players may ask their client for a hint (the next move of a winning line, from the shared solver on the
    own visible board); shown to both and kept in the record. Casual races only: a rated race with hints is
    ``bad_field`` ``settings.hints``."""


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
    state: AttemptState
    """``playing`` or how the attempt ended (see :class:`AttemptEnded`)."""
    connected: bool = True
    """False while no connection of this player is subscribed to the race (see :class:`Disconnected`)."""
    grace_until: int | None = None
    """While disconnected: server time (ms) at which the attempt ends as abandoned unless the player is back."""
    account: str | None = None
    """The registered handle of the player's account; nil for an anonymous player (whose ``name`` proves nothing,
    even when it equals some handle: show it as a guest)."""
    bot: bool = False
    """The account is a bot (the practice bot): always show it as one."""
    berserk: bool = False
    """An arena player who went berserk (see :class:`WentBerserk`): half the time limit."""
    deadline: int | None = None
    """A berserk seat's own deadline (server time, ms); nil: the race's."""


@dataclass(frozen=True, slots=True)
class RaceInfo:
    """A race as a player sees it when creating, joining or syncing."""

    race: str
    status: RaceStatus
    """``waiting`` (for the second player), ``countdown``, ``running`` or ``finished``."""
    settings: RaceSettings
    players: list[PlayerInfo]
    seed: int | None
    """Revealed with the result (nil before, even to the players: they get the layout, never the number)."""
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
    commitment: str | None = None
    """From the countdown on: SHA-256 (hex) committing to the deal (docs/PROTOCOL.md "Fair deals")."""
    seed_chosen: bool = False
    """The creator chose the seed: the deal may have been rehearsed (never rated)."""
    difficulty: Difficulty | None = None
    """The deal's tier, when the server knows it (solvable-only races)."""
    salt: str | None = None
    """Revealed with the result: the commitment's 16-byte salt in hex."""
    proving_line: list[str] | None = None
    """Revealed with the result of a solvable-only race: the solver's winning line the commitment includes."""


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
    status: Status
    undos: int
    redeal_used: bool
    redeal_columns: list[list[str]] | None = None
    """When ``moves`` include a ``redeal``: the columns it dealt (to replay ``moves`` without the seed)."""


@dataclass(frozen=True, slots=True)
class DealLayout:
    """A deal as dealt: six columns (first-dealt card first, the last available) and the bouquet, in notation."""

    columns: list[list[str]]
    bouquet: list[str]


@dataclass(frozen=True, slots=True)
class RatingChange:
    """How a rated race changed one player's Glicko-2 rating of the race's profile (whole points)."""

    before: int
    after: int
    delta: int
    """``after - before``."""
    deviation: int
    """The rating deviation after the race."""
    provisional: bool
    """The deviation is still above the provisional threshold (such players are left off the leaderboard)."""


@dataclass(frozen=True, slots=True)
class FinalStanding:
    """One player's line in the result."""

    slot: int
    player: str
    name: str
    count: int
    left: int
    ended: AttemptState
    """How the attempt ended (``race_over`` when the race was decided while it still ran)."""
    time_ms: int
    """From the start time to the end of the attempt."""
    moves: int
    undos: int
    account: str | None = None
    """The player's registered handle; nil: anonymous."""
    bot: bool = False
    rating: RatingChange | None = None
    """Rated races: the player's rating before and after this race (nil otherwise)."""


# --- players: ratings, leaderboards, histories, stats -----------------------------------------


@dataclass(frozen=True, slots=True)
class RatingInfo:
    """A player's current rating of one profile."""

    rating: int
    deviation: int
    """Grown with the time since the player's last rated race."""
    games: int
    """Rated races played."""
    provisional: bool


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    """One line of a leaderboard."""

    rank: int
    """1 for the best."""
    player: str
    handle: str
    bot: bool
    rating: int
    deviation: int
    games: int


@dataclass(frozen=True, slots=True)
class Opponent:
    """Who a player raced against."""

    player: str
    name: str
    account: str | None = None
    bot: bool = False


@dataclass(frozen=True, slots=True)
class HistoryItem:
    """One finished race of a player, from that player's side."""

    race: str
    """The race id: ``replay`` it while its record is kept (``replay_available``)."""
    finished_at: int
    profile: str
    rated: bool
    slot: int
    outcome: Outcome
    reason: ResultReason
    count: int
    ended: AttemptState
    time_ms: int
    moves: int
    opponent: Opponent
    rating: RatingChange | None = None
    replay_available: bool = True
    """False once the race's record is gone (never with a database: finished races are archived; without one, casual
    races are kept for the server's record time)."""
    aborted: AbortReason | None = None
    """Why the rated race was aborted, rated for nobody (the result's ``aborted``); None otherwise."""
    ghost: str | None = None
    """A ghost race's label (its ``settings.ghost``): the opponent in seat 1 replayed a recorded attempt; None for
    a race between two players."""


@dataclass(frozen=True, slots=True)
class ProfileStats:
    """A player's record in one profile."""

    profile: str
    races: int
    wins: int
    losses: int
    draws: int
    clears: int
    """Races in which the player cleared the board."""
    best_clear_ms: int | None
    """Fastest clear (from the start); nil without one."""
    average_count: float
    """Cards on the foundations at the end, on average."""
    rating: RatingInfo | None = None


@dataclass(frozen=True, slots=True)
class PlayerAnalysis:
    """Where one player's line lost the win (or that it did not): action numbers index the player's own actions."""

    slot: int
    verdict: LineVerdict
    fatal_action: int | None = None
    """``lost_at``: the 0-based number of the action after which the position was proven unwinnable."""
    fatal_move: str | None = None
    """``lost_at``: that action in notation."""
    first_action: int | None = None
    """``lost_between``: the first action that may have lost the win."""
    last_action: int | None = None
    """``lost_between``: the last one."""
    continuation: list[str] | None = None
    """A winning line from the last position known winnable (``still_winnable``: where the player stopped;
    ``lost_at``/``lost_between``: before the fatal range)."""


@dataclass(frozen=True, slots=True)
class RaceAnalysis:
    """The post-race analysis of a finished race (computed in the background after the result, never before)."""

    race: str
    deal: str
    """The solver's verdict on the deal: ``solved`` (winnable), ``unsolvable`` (proven not) or ``unknown``."""
    winning_line: list[str] | None
    """A winning line from the start; nil unless ``deal`` is ``solved`` (the stored event leaves nil and empty out)."""
    players: list[PlayerAnalysis]
    budget_ms: int
    """The solver's time budget per position analysed (ms)."""
    computed_at: int
    """Server time (ms) at which the analysis was stored."""


# --- the daily deal (docs/COMMUNITY.md) ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DailyResult:
    """How one attempt at a daily deal stands or ended."""

    state: AttemptState
    """``playing``, or how it ended: ``cleared``, ``blocked``, ``dead``, ``resigned`` (stopped) or ``time_limit``."""
    count: int
    """Cards on the foundations."""
    moves: int
    time_ms: int
    """From the attempt's start to its end (0 while it runs)."""
    counted: bool
    """The day's one counted attempt of a registered player (on the leaderboard); False for a guest's or a replay's."""


@dataclass(frozen=True, slots=True)
class DailyEntry:
    """One line of a day's leaderboard (shown only once the day is over)."""

    rank: int
    handle: str
    result: DailyResult


@dataclass(frozen=True, slots=True)
class DailyStats:
    """A finished day's statistics over its counted attempts."""

    players: int
    cleared: int
    clear_minutes: list[int]
    """How many clears took 0–1 min, 1–2 min, … (index: whole minutes)."""


@dataclass(frozen=True, slots=True)
class DailyDay:
    """One past day of the archive, with the asker's own counted attempt of it (the personal calendar)."""

    day: str
    difficulty: Difficulty | None
    players: int
    cleared: int
    own: DailyResult | None = None


# --- arena tournaments (docs/COMMUNITY.md) --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ArenaLine:
    """One line of an arena's standings."""

    rank: int
    handle: str
    score: int
    performance: int
    """The tie-break: the average rating of the opponents beaten (0 without a win)."""
    fire: bool
    """On a streak of two wins or more: the next result counts double."""
    games: int
    berserks: int = 0
    """How many of its races the player went berserk in (``arena_berserk``)."""


@dataclass(frozen=True, slots=True)
class ArenaGameLine:
    """One finished race of a player in an arena's record, from that player's side, with the points it earned."""

    race: str
    opponent: str
    """The opponent's player id (a :class:`ArenaPlayerRecord` of the same record)."""
    outcome: Outcome
    berserk: bool
    moves: int
    opponent_rating: float
    """The opponent's rating when it joined (the tie-break's currency)."""
    points: int
    """What the race earned by the arena's rules (streaks, berserk), given the player's earlier races."""


@dataclass(frozen=True, slots=True)
class ArenaPlayerRecord:
    """One player of an arena's record: who, its rating when it joined, and its races oldest first."""

    player: str
    handle: str
    rating: float
    games: list[ArenaGameLine]


@dataclass(frozen=True, slots=True)
class ArenaInfo:
    """An arena tournament: its name, its clock and its races' time limit."""

    arena: str
    name: str
    start_at: int
    end_at: int
    """Server time (ms) after which no new race is paired (races under way finish and count)."""
    time_limit: int
    """Seconds of each of its races (half for a player who goes berserk)."""
    status: ArenaStatus = ArenaStatus.RUNNING
    rated: bool = False
    """Its races change the players' classic ratings (as any rated race)."""
    private: bool = True
    """Not in ``arena_list``: joined by its link (an arena a player opened); operators' arenas are listed."""
    max_players: int | None = None
    """The most players who may join (nil: no cap)."""
    players: int = 0
    """How many joined so far."""
    races: int = 0
    """Races under way now."""
    schedule: str | None = None
    """The operator's recurring schedule it was opened by (docs/OPERATIONS.md "Recurring arenas"); nil otherwise."""
