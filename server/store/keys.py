"""Every Redis key name of the project (docs/STORAGE.md lists them with types and TTLs).

All keys of one race share the hash tag ``{race:<id>}`` so that a race's scripts
touch a single Cluster slot.
"""

from __future__ import annotations

import hashlib

PREFIX = "fgr"
TIMERS = f"{PREFIX}:timers"
"""Sorted set: race id -> next due time (ms) of one of its deadlines; polled by every process."""
LIVE = f"{PREFIX}:live"
"""Sorted set: race id -> start time (ms) of races being played; finished ones are pruned when listed."""


def race_keys(race_id: str) -> list[str]:
    """The keys of one race in the order the Lua scripts expect them (see lua/common.lua)."""
    tag = f"{PREFIX}:{{race:{race_id}}}"
    return [
        f"{tag}:state", f"{tag}:events", f"{tag}:moves:0", f"{tag}:moves:1", f"{tag}:move_ids:0", f"{tag}:move_ids:1",
        f"{tag}:presence:0", f"{tag}:presence:1", f"{tag}:watchers",
    ]  # fmt: skip


STATE, EVENTS, MOVES_0, MOVES_1, MOVE_IDS_0, MOVE_IDS_1, PRESENCE_0, PRESENCE_1, WATCHERS = range(9)
"""Indexes into :func:`race_keys`."""


def token_digest(token: str) -> str:
    """The SHA-256 of a session token (hex): what the keys hold instead of the token."""
    return hashlib.sha256(token.encode()).hexdigest()


def session_key(token: str) -> str:
    """A session hash, keyed by the SHA-256 of its token so a leaked key list reveals no token."""
    return session_key_of(token_digest(token))


def session_key_of(digest: str) -> str:
    """The session hash of a token's :func:`token_digest`."""
    return f"{PREFIX}:session:{digest}"


def session_seats_key(token: str) -> str:
    """Sorted set: race id -> when (ms) the session of ``token`` last took or synced a seat in it (its newest
    :data:`SESSION_SEATS_KEPT`): the races a ``login`` or ``register`` of the session must not orphan."""
    return session_seats_key_of(token_digest(token))


def session_seats_key_of(digest: str) -> str:
    """The seats of the session of a token's :func:`token_digest`."""
    return f"{PREFIX}:session_seats:{digest}"


def account_sessions_key(player: str) -> str:
    """Set: the token digests of the sessions logged in to an account (by its player id): ``change_password`` ends
    all but one of them."""
    return f"{PREFIX}:account_sessions:{player}"


SESSION_SEATS_KEPT = 64
"""How many of a session's races :func:`session_seats_key` remembers (far more than it can play at once)."""


def new_sessions_key(address: str) -> str:
    """Counter of the sessions created from one client address in the current window."""
    return f"{PREFIX}:new_sessions:{address}"


ONLINE = f"{PREFIX}:online"
"""Hash: server process id -> ``"<online> <racing> <reported at, ms>"``, each process's own count of its players
(lua/online_report.lua sums the fresh ones, drops the stale)."""


# --- lobby (one hash tag: the lobby scripts touch these keys together) ---------------------------

LOBBY_TAG = f"{PREFIX}:{{lobby}}"
LOBBY_OPEN = f"{LOBBY_TAG}:open"
"""Sorted set: listed race id -> created_at (ms); the lobby list, oldest first."""
LOBBY_ENTRIES = f"{LOBBY_TAG}:entries"
"""Hash: listed race id -> its lobby entry (MessagePack map)."""
LOBBY_ALIVE = f"{LOBBY_TAG}:alive"
"""Sorted set: race id -> last heartbeat (ms) of every race waiting for an opponent with a connected owner."""
LOBBY_FEED = f"{LOBBY_TAG}:feed"
"""Stream of lobby changes (added / changed / removed), trimmed to about a thousand entries."""


def invite_key(code: str) -> str:
    """A private race's invite code -> its race id."""
    return f"{LOBBY_TAG}:invite:{code}"


def lobby_keys(invite: str | None = None) -> list[str]:
    """The keys of the lobby scripts in the order they expect (lua/lobby_*.lua); the invite key last, if any."""
    listed = [LOBBY_OPEN, LOBBY_ENTRIES, LOBBY_ALIVE, LOBBY_FEED]
    return [*listed, invite_key(invite)] if invite else listed


INVITE_GUARD_TAG = f"{PREFIX}:{{invites}}"
INVITE_MISSES_ALL = f"{INVITE_GUARD_TAG}:misses:all"
"""Counter of everybody's wrong invite codes in the current window (the global guessing limit)."""


def invite_guard_keys(player: str, source: str) -> list[str]:
    """The keys of the invite guessing limits in the order lua/invite_attempt.lua expects: the player's and the source's
    wrong codes in the current window, the source's lock and strikes (its back-off), everybody's wrong codes."""
    return [
        f"{INVITE_GUARD_TAG}:misses:player:{player}", f"{INVITE_GUARD_TAG}:misses:source:{source}",
        f"{INVITE_GUARD_TAG}:lock:source:{source}", f"{INVITE_GUARD_TAG}:strikes:source:{source}", INVITE_MISSES_ALL,
    ]  # fmt: skip


# --- quick match (one hash tag) -------------------------------------------------------------------

QUICK_MATCH_TAG = f"{PREFIX}:{{qm}}"
QUICK_MATCH_PLAYERS = f"{QUICK_MATCH_TAG}:players"
"""Hash: player id -> ``<settings key>|<queue member>`` of its one queue entry."""


QUICK_MATCH_RATINGS = f"{QUICK_MATCH_TAG}:ratings"
"""Hash: a rated queue member -> ``<rating>|<queued at ms>`` (the rating window widens with the wait)."""
QUICK_MATCH_LAST = f"{QUICK_MATCH_TAG}:last_opponent"
"""Hash: player id -> the player it was last paired with by rated quick match (not the same pair twice in a row)."""


def quick_match_queue(settings_key: str) -> str:
    """Sorted set of the players waiting for these settings: ``<race id>:<player id>`` -> last heartbeat (ms)."""
    return f"{QUICK_MATCH_TAG}:queue:{settings_key}"


# --- solvable deals ----------------------------------------------------------------------------------


def seed_pool(profile: str, difficulty: str | None = None) -> str:
    """Set of deals the solver proved winnable under ``profile``, not handed out yet: one pool for races asking for
    no tier, one per tier (``easy``, ``medium``, ``hard``). Members are JSON ``{"seed", "difficulty", "line"}``."""
    return f"{PREFIX}:seeds:{profile}" if difficulty is None else f"{PREFIX}:seeds:{profile}:{difficulty}"


# --- the daily deal (one hash tag per day: its scripts touch the day's keys together) ---------------------

DAILY_DAYS = f"{PREFIX}:daily:days"
"""Sorted set: day (``YYYY-MM-DD``) -> its start (ms), every day that has a deal: the archive."""


def daily_deal(day: str) -> str:
    """Hash of a day's deal: seed, salt, line (JSON), commitment, profile, difficulty, time limit, opens/closes at."""
    return f"{PREFIX}:{{daily:{day}}}:deal"


def daily_attempt(day: str, attempt: str) -> str:
    """Hash of one attempt at a day's deal: player, handle, counted, started_at, deadline, state, count, moves,
    ended_at."""
    return f"{PREFIX}:{{daily:{day}}}:attempt:{attempt}"


def daily_moves(day: str, attempt: str) -> str:
    """List of an attempt's moves, each ``<ms after its start> <move>``."""
    return f"{PREFIX}:{{daily:{day}}}:moves:{attempt}"


def daily_counted(day: str) -> str:
    """Hash: handle -> attempt id of every counted attempt of the day (the leaderboard's players)."""
    return f"{PREFIX}:{{daily:{day}}}:counted"


def daily_calendar(player: str) -> str:
    """Set: the days on which an account's counted attempt cleared the deal (its streaks)."""
    return f"{PREFIX}:daily:cleared:{player}"


# --- arena tournaments (one hash tag per arena: its scripts touch its keys together) ---------------------------


def arena_keys(arena: str) -> dict[str, str]:
    """The keys of one arena: ``meta`` (hash: name, start_at, end_at), ``players`` (hash: player -> JSON handle and
    rating), ``free`` (sorted set: player -> since when free, ms), ``busy`` (hash: player -> race id), ``paused``
    (set), ``scores`` (sorted set: player -> score), ``booked`` (hash: race id -> 1), ``feed`` (stream: the pairings
    and results, for the processes that tell their connections), ``claimed`` (sorted set: race id -> when its pair
    was claimed, until the claiming process confirms it is creating the race), ``starting`` (hash: race id -> JSON
    ``{a, b, at}`` from the confirmation until its race is created and the pairing noted)."""
    tag = f"{PREFIX}:{{arena:{arena}}}"
    return {name: f"{tag}:{name}" for name in ("meta", "players", "free", "busy", "paused", "scores", "booked", "feed", "claimed", "starting")}


ARENAS_LISTED = f"{PREFIX}:arenas:listed"
"""Sorted set: the listed (operators') arenas -> their end time (ms): ``arena_list`` reads it."""
ARENAS_ENDING = f"{PREFIX}:arenas:ending"
"""Sorted set: every arena not archived yet -> its end time (ms): the archiver's index (ArenaStore.archive_finished)."""
ARENA_SCHEDULES = f"{PREFIX}:arenas:schedules"
"""Hash: an operator's recurring arena schedule (``flowergarden admin tournament add``) -> its spec text."""


def arena_games(arena: str, player: str) -> str:
    """List of one player's finished races in an arena (JSON each), oldest first."""
    return f"{PREFIX}:{{arena:{arena}}}:games:{player}"


def analysis_queue() -> str:
    """Sorted set: race id -> when the analysis worker should look at it next (ms); entries leave once analysed."""
    return f"{PREFIX}:analysis:queue"


def race_analysis(race_id: str) -> str:
    """The post-race analysis of a race (JSON: the analysis and the operators' signals), in the race's hash tag; kept as long as its record."""
    return f"{PREFIX}:{{race:{race_id}}}:analysis"


def race_solution(race_id: str, slot: int, actions: int) -> str:
    """The cached ``solve_from`` answer (JSON ``{"verdict", "line"}``) for the position after ``actions`` of the player
    of ``slot``, in the race's hash tag; kept as long as its record."""
    return f"{PREFIX}:{{race:{race_id}}}:solution:{slot}:{actions}"


def solve_from_key(kind: str, who: str) -> str:
    """Counter of the ``solve_from`` requests the solver answered for one session (``kind`` ``player``) or client
    address (``address``) in the current window."""
    return f"{PREFIX}:solve_from:{kind}:{who}"


# --- operations (docs/OPERATIONS.md "Administration") ------------------------------------------------

OPS_TAG = f"{PREFIX}:{{ops}}"
ADMIN_COMMANDS = f"{OPS_TAG}:commands"
"""Stream of signed operator commands every server process reads (trimmed to about a thousand entries)."""
ADMIN_AUDIT = f"{OPS_TAG}:audit"
"""Stream: one entry per operator command executed (or refused), trimmed to about a hundred thousand."""
RECORD_SIGNING_KEY = f"{OPS_TAG}:record_signing_key"
"""String: the Ed25519 private key (32 bytes) every process signs exported race records with; made by the first
process that starts (docs/FAIRPLAY.md "What verify proves")."""
STORE_LAYOUT = f"{OPS_TAG}:layout"
"""String: the version of the key layout the newest release that served this store writes (server/store/durability.py
``check_layout``): a process of an older release refuses to start on it."""
PROCESSES = f"{OPS_TAG}:processes"
"""Sorted set: server process id -> expiry (ms) of its registration, renewed every few seconds."""


def process_key(process_id: str) -> str:
    """Hash: a server process's host, port, pid, start time, connections, draining flag (expires with its lease)."""
    return f"{OPS_TAG}:process:{process_id}"


def admin_reply_key(command_id: str) -> str:
    """Stream of the processes' replies to one operator command (expires a minute after the command)."""
    return f"{OPS_TAG}:reply:{command_id}"


def admin_claim_key(command_id: str) -> str:
    """Set once by the process that carries out a command's one-time part (storing a ban, closing a race)."""
    return f"{OPS_TAG}:claim:{command_id}"


def ban_key(kind: str, subject: str) -> str:
    """A ban of a player id or an IP address (``kind`` ``player`` or ``ip``): its JSON, expiring when the ban ends."""
    return f"{PREFIX}:ban:{kind}:{subject}"


# --- accounts, ratings, history and stats (one hash tag: the bookkeeping script of a finished race writes them together)

PLAYERS_TAG = f"{PREFIX}:{{players}}"
PLAYERS_PENDING = f"{PLAYERS_TAG}:pending"
"""Sorted set: race id -> start time (ms) of races with a registered player whose result is not booked yet."""
PLAYERS_BY_ID = f"{PLAYERS_TAG}:by_player"
"""Hash: an account's player id -> its handle in lower case."""


def account_key(handle: str) -> str:
    """Hash of one account, by its handle in lower case (handles are unique regardless of case)."""
    return f"{PLAYERS_TAG}:account:{handle.lower()}"


def rating_key(profile: str, player: str) -> str:
    """Hash: a player's Glicko-2 rating of ``profile``."""
    return f"{PLAYERS_TAG}:rating:{profile}:{player}"


def leaderboard_key(profile: str) -> str:
    """Sorted set: established (non-provisional) player id -> rating."""
    return f"{PLAYERS_TAG}:leaderboard:{profile}"


def history_key(player: str) -> str:
    """Sorted set: race id -> finished_at (ms) of a player's finished races."""
    return f"{PLAYERS_TAG}:history:{player}"


def history_items_key(player: str) -> str:
    """Hash: race id -> the race from the player's side (MessagePack map, a HistoryItem)."""
    return f"{PLAYERS_TAG}:history_items:{player}"


def stats_key(player: str, profile: str) -> str:
    """Hash: a player's counters in ``profile``."""
    return f"{PLAYERS_TAG}:stats:{player}:{profile}"


def opponents_key(profile: str, player: str) -> str:
    """Set: the player ids a player played (booked) rated races of ``profile`` against; the leaderboard asks for a
    number of distinct ones."""
    return f"{PLAYERS_TAG}:opponents:{profile}:{player}"


def rated_busy_key(player: str) -> str:
    """String: the rated race a player is playing (one at a time), with the live TTL."""
    return f"{PLAYERS_TAG}:rated_busy:{player}"


def sightings_key(player: str) -> str:
    """Sorted set: client address (IPv4, IPv6 /64) -> when (ms) an account's player was last seen on it (hello,
    login, register), its newest :data:`SIGHTINGS_KEPT` within the ladder's address window."""
    return f"{PLAYERS_TAG}:sightings:{player}"


SIGHTINGS_KEPT = 32
"""How many addresses :func:`sightings_key` remembers per player."""


def pair_name(players: tuple[str, str] | list[str]) -> str:
    """The name of an unordered pair of player ids (the same whoever created the race)."""
    first, second = sorted(players)
    return f"{first}|{second}"


def pair_races_key(pair: str) -> str:
    """Counter of the rated races a pair (:func:`pair_name`) began in the current pair window."""
    return f"{PLAYERS_TAG}:pair_races:{pair}"


def pair_signals_key(pair: str) -> str:
    """Hash of what operators should know of a pair: rated races begun, refusals for a shared address or the pair
    limit, aborted results; both handles and when the last came (``flowergarden admin pairs``)."""
    return f"{PLAYERS_TAG}:pair_signals:{pair}"


SUSPICIOUS_PAIRS = f"{PLAYERS_TAG}:suspicious_pairs"
"""Sorted set: pair name -> when (ms) its last signal came (a shared address, the pair limit, an aborted result)."""


LOGIN_TAG = f"{PREFIX}:{{logins}}"
LOGIN_ATTEMPTS_ALL = f"{LOGIN_TAG}:attempts:all"
"""Counter of everybody's logins and registrations in the current attempt window (the global budget)."""


def login_guard_keys(address: str, handle: str | None) -> list[str]:
    """The keys of the login and registration limits in the order lua/login_attempt.lua expects: the client address's
    attempts, everybody's attempts, the address's failed logins; then for a login (``handle``) the failed logins to the
    handle from the address and from anywhere, for a registration the accounts registered from the address."""
    common = [f"{LOGIN_TAG}:attempts:address:{address}", LOGIN_ATTEMPTS_ALL, f"{LOGIN_TAG}:failures:address:{address}"]
    if handle is None:
        return [*common, f"{LOGIN_TAG}:registrations:address:{address}"]
    handle = handle.lower()
    return [*common, f"{LOGIN_TAG}:failures:handle_address:{handle}:{address}", f"{LOGIN_TAG}:failures:handle:{handle}"]


# --- the archive of finished races (PostgreSQL; docs/STORAGE.md "The archive") ---------------------

ARCHIVE_QUEUE = f"{PREFIX}:archive:queue"
"""Stream: one entry ``race`` = race id per finished race, until the archiver has it in PostgreSQL (XACK + XDEL)."""
ARCHIVE_GROUP = "archivers"
"""The consumer group of :data:`ARCHIVE_QUEUE`: each entry goes to one server process's archiver at a time."""
