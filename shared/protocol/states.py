"""The closed sets of values the protocol carries: race status, attempt state, result and close reasons, lobby ops.

Each is a :class:`~enum.StrEnum`, so a member packs as its value and compares equal to it: the wire is unchanged. The
Lua scripts under ``server/store/lua/`` write the same values (tests/test_lua_literals.py proves it).
"""

from __future__ import annotations

from enum import StrEnum


class RaceStatus(StrEnum):
    """Where a race is in its life."""

    WAITING = "waiting"
    """One seat taken; waiting for the second player."""
    COUNTDOWN = "countdown"
    """Both seats taken; moves open at ``start_at``."""
    RUNNING = "running"
    """Moves are open."""
    FINISHED = "finished"
    """The race has a result."""
    CLOSED = "closed"
    """The race ended before it started (its creator left); see :class:`CloseReason`."""


OPEN_STATUSES = frozenset({RaceStatus.WAITING, RaceStatus.COUNTDOWN})
"""A race not started yet: its seats may still change."""
LIVE_STATUSES = frozenset({RaceStatus.COUNTDOWN, RaceStatus.RUNNING})
"""A race being played (both seats taken, no result yet)."""
OVER_STATUSES = frozenset({RaceStatus.FINISHED, RaceStatus.CLOSED})
"""A race nothing can change any more."""


class AttemptState(StrEnum):
    """A player's attempt: still ``playing``, or how it ended (the ``reason`` of ``attempt_ended``)."""

    PLAYING = "playing"
    CLEARED = "cleared"
    """All 52 cards on the foundations."""
    BLOCKED = "blocked"
    """No legal move is left."""
    DEAD = "dead"
    """Moves are left, but the server proved no further card can reach a foundation."""
    RESIGNED = "resigned"
    STUCK = "stuck"
    """The player declared it can make no more progress."""
    ABANDONED = "abandoned"
    """Disconnected past its grace period."""
    TIME_LIMIT = "time_limit"
    """The race's time limit passed."""
    RACE_OVER = "race_over"
    """The race was decided while this attempt still ran."""


class ArenaStatus(StrEnum):
    """Where an arena tournament is in its clock (``arena_list`` sorts them by it)."""

    UPCOMING = "upcoming"
    """Before its start: players may join; nobody is paired yet."""
    RUNNING = "running"
    """Between its start and its end: free players are paired."""
    FINISHED = "finished"
    """Its clock ran out: no new pairing; races under way still finish and count (``races`` says how many)."""


class GhostSource(StrEnum):
    """Where the recorded attempt a ghost race replays comes from (``ghost_race``)."""

    DAILY = "daily"
    """A counted attempt of a finished day of the daily deal (by handle: one's own, a friend's, a leaderboard's)."""
    RACE = "race"
    """One player's line of a finished race (by race id and seat: one's own best, a friend's from their history)."""


class ResultReason(StrEnum):
    """Why the ``result`` names its winner (docs/PROTOCOL.md "Result")."""

    CLEARED = "cleared"
    """First to clear."""
    COUNT = "count"
    """The higher foundation count."""
    REACHED_FIRST = "reached_first"
    """Equal counts; the winner reached it earlier."""
    ABANDONED = "abandoned"
    """A rated race: the opponent abandoned it (disconnected past its grace period)."""
    DRAW = "draw"


class AbortReason(StrEnum):
    """Why a rated race's ``result`` is ``aborted``: rated for nobody (docs/PLAYERS.md "Ladder rules")."""

    TOO_FEW_MOVES = "too_few_moves"
    """A player made fewer than the server's least number of moves (``ladder.min_moves``)."""
    TOO_SHORT = "too_short"
    """The race ended sooner after its start than the server's least duration (``ladder.min_seconds``)."""


class CloseReason(StrEnum):
    """Why a race closed without a result (the ``reason`` of ``race_closed``): before its start, or by an operator."""

    LEFT = "left"
    """The creator left."""
    ABANDONED = "abandoned"
    """The creator's connection or server went away."""
    CANCELLED = "cancelled"
    """A quick-match entry was cancelled."""
    LOBBY_FULL = "lobby_full"
    """The lobby had no room for it."""
    EXPIRED = "expired"
    """Nobody joined it within the server's waiting limit."""
    OPERATOR = "operator"
    """An operator closed it (at any time before its result); the event's ``message`` says why."""
    PAIRED = "paired"
    """Rated quick match seated the waiting player in another waiting player's race (``new_race``)."""


class Outcome(StrEnum):
    """A finished race from one player's side (history lines)."""

    WON = "won"
    LOST = "lost"
    DRAW = "draw"


class Spectators(StrEnum):
    """Who may watch a race (``settings.spectators``, chosen by its creator)."""

    ANYONE = "anyone"
    """Listed in ``live_races``; anyone may watch and replay it."""
    LINK = "link"
    """Never listed; whoever has the race id may watch and replay it."""
    NOBODY = "nobody"
    """Nobody may watch it (``no_spectators``); only its players may replay it."""


class Difficulty(StrEnum):
    """A deal's tier from the solver (shared/solver/difficulty.py computes it; docs/PROTOCOL.md "Fair deals")."""

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"
    UNWINNABLE = "unwinnable"
    """Proven unwinnable by plain moves."""
    UNKNOWN = "unknown"
    """The budget ran out before the solver decided the deal."""


class LineVerdict(StrEnum):
    """What the post-race analysis could say about one player's line (shared/solver/analysis.py)."""

    DEAL_NOT_WINNABLE = "deal_not_winnable"
    """The deal itself was proven unwinnable: no move lost anything."""
    STILL_WINNABLE = "still_winnable"
    """The position the player stopped in could still be won; ``continuation`` wins it."""
    WON = "won"
    """The player cleared the board."""
    LOST_AT = "lost_at"
    """``fatal_action`` is the move after which the position was proven unwinnable."""
    LOST_BETWEEN = "lost_between"
    """The win was lost somewhere from action ``first_action`` to ``last_action``; the budget did not narrow it."""
    UNKNOWN = "unknown"
    """The budget did not decide enough positions to say anything."""


class Emote(StrEnum):
    """A quick emote: one of a fixed set of phrases a race's player sends the opponent (``emote``). Only the phrase's
    name goes over the wire; each client says it in its reader's own language (``emote.<value>`` in
    ``shared/words``), so there is no free text to moderate."""

    HELLO = "hello"
    GOOD_LUCK = "good_luck"
    HAVE_FUN = "have_fun"
    NICE_MOVE = "nice_move"
    OOPS = "oops"
    WOW = "wow"
    WELL_PLAYED = "well_played"
    THANKS = "thanks"
    REMATCH = "rematch"
    BYE = "bye"


class LobbyOp(StrEnum):
    """A change of the lobby list, as the lobby feed stores it (the type of the lobby event it becomes)."""

    ADDED = "lobby_added"
    CHANGED = "lobby_changed"
    REMOVED = "lobby_removed"
