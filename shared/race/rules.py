"""The race's rules beyond one board, as one specification: who wins and why (docs/PROTOCOL.md "Result"), when the
time limit ends the attempts, when a disconnected player's grace period ends its attempt as abandoned, and when a
rated race is aborted (docs/PLAYERS.md "Ladder rules").

The Lua scripts implement these rules where they are enforced, atomically in Redis (server/store/lua/common.lua:
``outcome``, ``decide``, ``abort_reason``, ``time_up``, ``update_seat``, ``open_for_play``); the record check
(:mod:`shared.race.record`) applies :func:`outcome` to a replayed record. :class:`RaceRules` composes the rules as
the scripts apply them, action by action and tick by tick, so that tests/test_race_rules_differential.py can hold
every copy to this one: generated races run through it, through the scripts on a real Redis, through the record
check and through the browser's fold of the events (race_state.js, engine.js), and any disagreement fails.

Pure: times are milliseconds given by the caller (the scripts use Redis' clock).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from shared.board import Board
from shared.protocol import AbortReason, AttemptState, ErrorCode, RaceStatus, ResultReason

DEFAULT_GRACE_MS: Final = 30_000
"""The grace period of a race stored without its own (``grace_ms`` missing or 0)."""


@dataclass(frozen=True, slots=True)
class Standing:
    """One seat as the result rules see it: its attempt's state and foundation count, and the order in which things
    happened to it (event sequence numbers: any increasing numbering of the race's events will do)."""

    state: AttemptState = AttemptState.PLAYING
    count: int = 0
    count_seq: int = 0
    """The event at which the count last changed (0: it never did)."""
    ended_seq: int = 0
    """The event that ended the attempt (0: it still runs)."""

    @property
    def playing(self) -> bool:
        """Whether the attempt still runs."""
        return self.state is AttemptState.PLAYING

    def counted(self, count: int, seq: int) -> Standing:
        """After an action at event ``seq`` that left ``count`` cards on the foundations."""
        return self if count == self.count else replace(self, count=count, count_seq=seq)

    def ended(self, reason: AttemptState, seq: int) -> Standing:
        """After the attempt ended for ``reason`` at event ``seq``."""
        return replace(self, state=reason, ended_seq=seq)


@dataclass(frozen=True, slots=True)
class Outcome:
    """A race's result: the winning seat (None for a draw) and why."""

    winner: int | None
    reason: ResultReason


def outcome(seats: Sequence[Standing], *, rated: bool, undo: bool) -> Outcome | None:
    """The result once the winner can no longer change, else None (docs/PROTOCOL.md "Result", rules 1-4).

    1. The first to clear wins (``cleared``). 4. In a rated race one who abandoned loses (``abandoned``), unless
    both did. 2. Both attempts over: the higher count wins (``count``), then the count reached first
    (``reached_first``), else a draw. 3. Without undo a count never falls, so a running attempt already ahead of
    an ended one has won.
    """
    first, second = seats
    if first.playing and second.playing:
        return None  # every rule below needs an attempt over
    if AttemptState.CLEARED in (first.state, second.state):
        return _first_to_clear(first, second)
    abandoned = [seat.state is AttemptState.ABANDONED for seat in seats]
    if rated and abandoned[0] != abandoned[1]:
        return Outcome(1 if abandoned[0] else 0, ResultReason.ABANDONED)
    if not first.playing and not second.playing:
        return _both_over(first, second)
    return None if undo else _ahead_of_ended(seats)


def _first_to_clear(first: Standing, second: Standing) -> Outcome:
    """Rule 1, once a seat cleared: the first to clear wins."""
    first_cleared = first.state is AttemptState.CLEARED
    second_cleared = second.state is AttemptState.CLEARED
    winner = 0 if first_cleared and (not second_cleared or first.ended_seq < second.ended_seq) else 1
    return Outcome(winner, ResultReason.CLEARED)


def _both_over(first: Standing, second: Standing) -> Outcome:
    """Rule 2: the higher count wins, then the count reached first, else a draw."""
    if first.count != second.count:
        return Outcome(0 if first.count > second.count else 1, ResultReason.COUNT)
    if first.count_seq != second.count_seq:
        return Outcome(0 if first.count_seq < second.count_seq else 1, ResultReason.REACHED_FIRST)
    return Outcome(None, ResultReason.DRAW)


def _ahead_of_ended(seats: Sequence[Standing]) -> Outcome | None:
    """Rule 3, one attempt over and no undo: the running attempt has won if it is already ahead of the ended one."""
    live = 0 if seats[0].playing else 1
    running, done = seats[live], seats[1 - live]
    if running.count > done.count:
        return Outcome(live, ResultReason.COUNT)
    if running.count == done.count and running.count_seq < done.count_seq:
        return Outcome(live, ResultReason.REACHED_FIRST)
    return None


def abort_reason(*, rated: bool, moves: Sequence[int], played_ms: int, abort_moves: int, abort_ms: int) -> AbortReason | None:
    """Why a rated race decided now is aborted, rated for nobody (docs/PLAYERS.md "Ladder rules"), or None: a player
    made fewer than ``abort_moves`` actions, or it was decided within ``abort_ms`` of its start (``played_ms``)."""
    if not rated:
        return None
    if min(moves) < abort_moves:
        return AbortReason.TOO_FEW_MOVES
    return AbortReason.TOO_SHORT if played_ms < abort_ms else None


def attempt_can_end_by_position(board: Board) -> bool:
    """Whether a blocked or dead position ends the attempt: only when no undo or unused redeal could change it."""
    return not board.rules.undo and (not board.rules.redeal_once or board.redeal_used)


def deadline_of(start_at: int, time_limit_s: int | None) -> int:
    """When the time limit ends every running attempt (ms; 0 for no limit): ``time_limit`` seconds after the start."""
    return start_at + time_limit_s * 1000 if time_limit_s else 0


def past_deadline(now: int, deadline: int) -> bool:
    """Whether the time limit (0: none) has passed at ``now``."""
    return deadline > 0 and now >= deadline


def grace_period_ms(grace_ms: int | None) -> int:
    """How long a disconnected player keeps its attempt: the race's own grace period, else :data:`DEFAULT_GRACE_MS`."""
    return grace_ms if grace_ms else DEFAULT_GRACE_MS


def grace_runs(status: RaceStatus, seat: Standing) -> bool:
    """Whether an absent player's grace period runs: from the countdown on, while its attempt runs."""
    return status in (RaceStatus.COUNTDOWN, RaceStatus.RUNNING) and seat.playing


def grace_over(now: int, grace_until: int, status: RaceStatus, seat: Standing) -> bool:
    """Whether an absent player's attempt ends as abandoned at ``now``: its grace period (``grace_until``, 0 for none)
    is over, the race runs (a grace period that ends during the countdown ends the attempt at the start) and the
    attempt still runs."""
    return 0 < grace_until <= now and status is RaceStatus.RUNNING and seat.playing


@dataclass(slots=True)
class Seat:
    """A seat in :class:`RaceRules`: its standing, its stored actions, and whether its player is away (no connection
    follows the race) and until when its grace period runs (0: none)."""

    standing: Standing = field(default_factory=Standing)
    actions: int = 0
    away: bool = False
    grace_until: int = 0


@dataclass(slots=True)
class RaceRules:
    """A race of two seated players from its countdown on, moved by the rules as the scripts apply them: a rule that
    depends on time acts when a script next runs at or after that time (an action, an attempt's end, a presence
    change or the timer's tick; the timer ticks at :meth:`next_due`). The time limit is applied by every script
    that opens the race for play (action, end, tick), a grace period's end only by a presence change or a tick; when
    both are due the time limit ends the attempts first."""

    start_at: int
    deadline: int
    seat_deadlines: tuple[int, int] = (0, 0)
    """A berserk arena seat's own deadline (half the time limit; 0: the race's): only its attempt ends then."""
    rated: bool = False
    undo: bool = False
    grace_ms: int | None = None
    abort_moves: int = 0
    abort_ms: int = 0
    """A rated race's abort rule (:func:`abort_reason`), fixed at the join from the server's ladder rules."""
    status: RaceStatus = RaceStatus.COUNTDOWN
    seats: tuple[Seat, Seat] = field(default_factory=lambda: (Seat(), Seat()))
    result: Outcome | None = None
    aborted: AbortReason | None = None
    seq: int = 0
    """The last event numbered (only the order of events matters to the rules)."""

    def standings(self) -> tuple[Standing, Standing]:
        """Both seats' standings, seat 0 first."""
        return self.seats[0].standing, self.seats[1].standing

    def act(self, slot: int, now: int, count: int, ends: AttemptState | None = None) -> ErrorCode | None:
        """A player's action the engine accepted, leaving ``count`` on the foundations and ending the attempt for
        ``ends`` (None: it goes on); the refusal, or None when it is stored."""
        refusal = self._open_for_play(now)
        if refusal is not None:
            return refusal
        seat = self.seats[slot]
        if not seat.standing.playing:
            return ErrorCode.ATTEMPT_OVER
        seat.actions += 1
        seat.standing = seat.standing.counted(count, self._next_seq())
        if ends is not None:
            seat.standing = seat.standing.ended(ends, self._next_seq())
        self._decide(now)
        return None

    def end_attempt(self, slot: int, reason: AttemptState, now: int) -> ErrorCode | None:
        """A player ends its attempt (``resigned``, ``stuck``, a proved-dead position); the refusal, or None."""
        refusal = self._open_for_play(now)
        if refusal is not None:
            return refusal
        seat = self.seats[slot]
        if not seat.standing.playing:
            return ErrorCode.ATTEMPT_OVER
        seat.standing = seat.standing.ended(reason, self._next_seq())
        self._decide(now)
        return None

    def presence(self, slot: int, *, here: bool, now: int) -> None:
        """The seat's player connects (``here``) or its last connection goes; every seat's presence is then brought
        up to date (a grace period over ends its attempt)."""
        if self.status is RaceStatus.FINISHED:
            return
        self.seats[slot].away = not here
        self._update_presence(now)

    def tick(self, now: int) -> None:
        """The timer: the start, the time limit and the grace periods due by ``now``."""
        if self.status is RaceStatus.FINISHED:
            return
        if (self.status is RaceStatus.RUNNING or now >= self.start_at) and self._open_for_play(now) is not None:
            return  # the time limit decided the race
        self._update_presence(now)

    def next_due(self) -> int:
        """When a rule next acts (the start, the time limit, a grace period's end; ms, 0 for none)."""
        if self.status is RaceStatus.FINISHED:
            return 0
        dues = [self.start_at] if self.status is RaceStatus.COUNTDOWN else []
        dues.append(self.deadline)
        if self.status is RaceStatus.RUNNING:
            dues.extend(seat.grace_until for seat in self.seats if seat.standing.playing)
            dues.extend(due for seat, due in zip(self.seats, self.seat_deadlines, strict=True) if seat.standing.playing)
        return min((due for due in dues if due > 0), default=0)

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def _open_for_play(self, now: int) -> ErrorCode | None:
        """Countdown over -> running; the time limit passed -> every running attempt ends (``time_limit``); a
        berserk seat's own deadline passed -> its attempt ends (``time_limit``)."""
        if self.status is RaceStatus.FINISHED:
            return ErrorCode.RACE_OVER
        if self.status is RaceStatus.COUNTDOWN:
            if now < self.start_at:
                return ErrorCode.NOT_STARTED
            self.status = RaceStatus.RUNNING
        if past_deadline(now, self.deadline):
            for seat in self.seats:
                if seat.standing.playing:
                    seat.standing = seat.standing.ended(AttemptState.TIME_LIMIT, self._next_seq())
            self._decide(now)
            return ErrorCode.RACE_OVER
        ended = False
        for seat, due in zip(self.seats, self.seat_deadlines, strict=True):
            if seat.standing.playing and past_deadline(now, due):
                seat.standing = seat.standing.ended(AttemptState.TIME_LIMIT, self._next_seq())
                ended = True
        if ended:
            self._decide(now)
        return ErrorCode.RACE_OVER if self.status is RaceStatus.FINISHED else None

    def _update_presence(self, now: int) -> None:
        ended = False
        for seat in self.seats:
            if not seat.away:
                seat.grace_until = 0
                continue
            if seat.grace_until == 0 and grace_runs(self.status, seat.standing):
                seat.grace_until = now + grace_period_ms(self.grace_ms)
            if grace_over(now, seat.grace_until, self.status, seat.standing):
                seat.standing = seat.standing.ended(AttemptState.ABANDONED, self._next_seq())
                ended = True
        if ended:
            self._decide(now)

    def _decide(self, now: int) -> None:
        """Finish the race when the winner can no longer change: the attempts still running end ``race_over``; a
        rated race too short to mean anything is aborted."""
        decided = outcome(self.standings(), rated=self.rated, undo=self.undo)
        if decided is None:
            return
        self.aborted = abort_reason(
            rated=self.rated, moves=[seat.actions for seat in self.seats], played_ms=now - self.start_at,
            abort_moves=self.abort_moves, abort_ms=self.abort_ms,
        )
        for seat in self.seats:
            if seat.standing.playing:
                seat.standing = replace(seat.standing, state=AttemptState.RACE_OVER)
        self.status, self.result = RaceStatus.FINISHED, decided
