"""The daily deal: one proven-winnable deal per UTC day for everybody, one counted attempt per registered player.

The day's deal is drawn from the seed pool's tier (``daily_difficulty``) when the day starts, and its commitment
(shared/commitment.py, as a race's) is public from then on; its seed, salt and the solver's line are revealed when the
day ends. Every attempt ends by the day's end at the latest (its deadline is the sooner of its time limit and the day's
end), so at the reveal nobody is still playing the deal. Until then nobody sees anything of another player's attempt:
the leaderboard, the statistics and the replays of a day open when it ends (docs/COMMUNITY.md).

The clock is a seam (``now_ms``): Redis' clock by default, a test's own clock in tests of the day's end.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from server.services.background import BackgroundLoop
from server.services.errors import ServiceError
from server.services.seed_pool import SeedPool
from server.services.sessions import Session
from server.store import DailyDeal, DailyStore, StoredAttempt, StoreError, StoreRefusal, deal_texts
from server.store.daily_store import COUNTED_PREFIX
from shared import Board, DeadCheck, EngineError, Profile, Rules, Special, Status, parse_action
from shared.commitment import SALT_BYTES, deal_commitment, line_digest
from shared.daily import AttemptFacts, DayStatistics, day_of, day_start, next_day, ranked, statistics, streaks
from shared.errors import IllegalMoveCode
from shared.protocol import (
    AttemptState,
    Daily,
    DailyArchive,
    DailyAttempt,
    DailyBoard,
    DailyDay,
    DailyEntry,
    DailyMoved,
    DailyReplay,
    DailyResult,
    DailyStats,
    Difficulty,
    ErrorCode,
)

log = logging.getLogger(__name__)

Clock = Callable[[], Awaitable[int]]
"""Server time now, ms since the Unix epoch."""

ARCHIVE_GRACE_MS = 60_000
"""How long after a day's end it moves to the database: every counted attempt ended with the day (its deadline is
at most the day's end), and a move sent just before then has landed."""

ENDS_WITH: dict[Status, AttemptState] = {Status.WON: AttemptState.CLEARED, Status.BLOCKED: AttemptState.BLOCKED, Status.DEAD: AttemptState.DEAD}
"""The board's status after a move that ends the attempt, and the attempt's end state."""


@dataclass(frozen=True, slots=True)
class DailyRules:
    """How the daily deal is dealt and played (server settings ``daily_*``, docs/OPERATIONS.md)."""

    difficulty: Difficulty = Difficulty.MEDIUM
    """The seed pool tier the day's deal comes from."""
    profile: str = Profile.CLASSIC.value
    time_limit_seconds: int = 900
    """How long one attempt may last (it ends at the day's end at the latest)."""
    top: int = 10
    """Leaderboard lines a finished day's ``daily_info`` carries."""


@dataclass(frozen=True, slots=True)
class FinishedDay:
    """A day after its end, computed once: its deal, counted attempts in leaderboard order, statistics."""

    deal: DailyDeal
    ranked: list[StoredAttempt]
    stats: DayStatistics


def result_of(attempt: StoredAttempt, now: int) -> DailyResult:
    """An attempt's result as it stands at ``now``."""
    facts = attempt.facts.settled(now)
    return DailyResult(state=facts.state, count=facts.count, moves=facts.moves, time_ms=facts.time_ms, counted=attempt.counted)


def attempt_id(day: str, key: str) -> str:
    """The wire's id of an attempt."""
    return f"{day}/{key}"


class DailyService:
    """Days, attempts and their results; the one authority over what of a day is visible when."""

    def __init__(
        self, store: DailyStore, seeds: SeedPool, rules: DailyRules, *, now_ms: Clock | None = None, dead_check: DeadCheck | None = None,
        retry_seconds: float = 5.0,
    ) -> None:  # fmt: skip
        """``now_ms`` the clock of days and attempts (default: Redis'); ``dead_check`` ends an attempt whose position
        is proven dead."""
        self.store = store
        self.seeds = seeds
        self.rules = rules
        self.now_ms: Clock = now_ms or store.now_ms
        self.dead_check = dead_check
        self.retry_seconds = retry_seconds
        self._boards: OrderedDict[str, tuple[int, Board]] = OrderedDict()
        self._finished: OrderedDict[str, FinishedDay] = OrderedDict()
        self._loop = BackgroundLoop("daily deal")

    # --- the day's deal --------------------------------------------------------------------------------

    async def deal_of(self, day: str | None, now: int) -> DailyDeal:
        """The deal of ``day`` (None: today), drawn now if it is today's and nobody drew it yet; ServiceError
        ``unknown_day`` for a future day, a day without a deal or no day at all."""
        today = day_of(now)
        day = today if day is None else day
        try:
            day_start(day)
        except ValueError:
            raise ServiceError(ErrorCode.UNKNOWN_DAY, f"{day!r} is not a day (YYYY-MM-DD)", field="day") from None
        if day > today:
            raise ServiceError(ErrorCode.UNKNOWN_DAY, f"the deal of {day} is not dealt yet (today is {today}, UTC)", field="day")
        deal = await self.store.deal(day)
        if deal is None and day == today:
            deal = await self._draw(day)
        if deal is None:
            raise ServiceError(ErrorCode.UNKNOWN_DAY, f"there was no daily deal on {day}", field="day")
        return deal

    async def _draw(self, day: str) -> DailyDeal:
        """Fix ``day``'s deal from the pool of the rules' tier (another process may have fixed it first: the pooled deal
        taken here goes back)."""
        rules = self.rules
        pooled = await self.seeds.take(rules.profile, rules.difficulty)
        salt = secrets.token_bytes(SALT_BYTES)
        opens = day_start(day)
        deal = DailyDeal(
            day=day, seed=pooled.seed, salt=salt.hex(), line=pooled.line, difficulty=pooled.difficulty, profile=rules.profile,
            commitment=deal_commitment(pooled.seed, Profile(rules.profile), salt, line_digest(pooled.line)),
            time_limit_ms=rules.time_limit_seconds * 1000, opens_at=opens, closes_at=day_start(next_day(day)),
        )  # fmt: skip
        fixed = await self.store.open_day(deal)
        if fixed.seed != deal.seed:
            await self.seeds.give_back(rules.profile, pooled, tiered=True)
        else:
            log.info("daily deal of %s fixed (%s, commitment %s)", day, rules.difficulty.value, deal.commitment)
        return fixed

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._loop.stop()

    async def run(self) -> None:
        """Fix each day's deal as soon as the day starts (so its commitment is public from then on), retrying while the
        pool has no deal of the tier ready."""

        async def step() -> None:
            now = await self.now_ms()
            try:
                await self.deal_of(None, now)
            except ServiceError as error:  # the pool has no deal of the tier yet: not a failure of the loop
                if error.code is not ErrorCode.SEED_POOL_EMPTY:
                    raise
                log.debug("daily deal: %s", error.message)
            await self.archive_days(now)
            await asyncio.sleep(self.retry_seconds)

        await self._loop.run(step, retry_seconds=self.retry_seconds, expected=(StoreError, ServiceError))

    async def archive_days(self, now: int) -> list[str]:
        """Move the days that ended :data:`ARCHIVE_GRACE_MS` before ``now`` to the database (none without one): the
        grace lets a move sent just before the end land first. The days moved."""
        days = await self.store.archive_days(now - ARCHIVE_GRACE_MS)
        for day in days:
            log.info("daily deal of %s archived", day)
        return days

    # --- what a day shows ------------------------------------------------------------------------------

    async def info(self, session: Session, day: str | None) -> Daily:
        """A day's deal as the asker may see it now (see the module docstring)."""
        now = await self.now_ms()
        deal = await self.deal_of(day, now)
        over = now >= deal.closes_at
        own = await self._own(session, deal.day)
        streak, best = await self._streaks(session, now)
        reply = Daily(
            id=0, day=deal.day, profile=deal.profile, difficulty=deal.difficulty, time_limit=deal.time_limit_ms // 1000,
            commitment=deal.commitment, opens_at=deal.opens_at, closes_at=deal.closes_at, over=over,
            own=None if own is None else result_of(own, now), streak=streak, best_streak=best,
        )  # fmt: skip
        if not over:
            return reply
        finished = await self._finished_day(deal, now)
        return replace(
            reply, seed=deal.seed, salt=deal.salt, proving_line=list(deal.line), top=self._entries(finished, 0, self.rules.top, now),
            stats=_stats(finished.stats),
        )  # fmt: skip

    async def board(self, session: Session, day: str, offset: int, limit: int) -> DailyBoard:
        """A page of a finished day's leaderboard, its statistics and the asker's own line."""
        now = await self.now_ms()
        finished = await self._finished_day(await self._over(day, now), now)
        own = None
        if session.account is not None:
            own = next((entry for entry in self._entries(finished, 0, len(finished.ranked), now) if entry.handle == session.account), None)
        return DailyBoard(
            id=0, day=day, entries=self._entries(finished, offset, limit, now), total=len(finished.ranked), stats=_stats(finished.stats), own=own,
        )  # fmt: skip

    async def replay(self, session: Session, day: str, handle: str | None) -> DailyReplay:
        """A counted attempt of ``day`` with its moves and times: the asker's own at any time, anyone's once the day
        is over (``daily_not_over`` before)."""
        now = await self.now_ms()
        deal = await self.deal_of(day, now)
        own = handle is None or (session.account is not None and handle.lower() == session.account.lower())
        if not own and now < deal.closes_at:
            raise ServiceError(
                ErrorCode.DAILY_NOT_OVER, f"the attempts of {day} stay hidden until the day ends", field="handle", expected=deal.closes_at
            )
        who = session.account if handle is None else handle
        key = None if who is None else (await self.store.counted(day)).get(who.lower())
        attempt = None if key is None else await self.store.attempt(day, key)
        if attempt is None:
            raise ServiceError(ErrorCode.UNKNOWN_ATTEMPT, f"no counted attempt of {who or 'a guest'} on {day}", field="handle")
        columns, bouquet = deal_texts(deal.seed)
        return DailyReplay(
            id=0, day=day, handle=attempt.handle, columns=columns, bouquet=bouquet, moves=list(attempt.moves), times=list(attempt.times),
            result=result_of(attempt, now),
        )  # fmt: skip

    async def archive(self, session: Session, offset: int, limit: int) -> DailyArchive:
        """The days before today, newest first, each with its players, clears and the asker's own counted attempt."""
        now = await self.now_ms()
        names, total = await self.store.days_before(day_of(now), offset, limit)
        days = []
        for name in names:
            deal = await self.store.deal(name)
            if deal is None or now < deal.closes_at:
                continue
            finished = await self._finished_day(deal, now)
            own = next((attempt for attempt in finished.ranked if attempt.player == session.player), None)
            days.append(
                DailyDay(
                    day=name, difficulty=deal.difficulty, players=finished.stats.players, cleared=finished.stats.cleared,
                    own=None if own is None else result_of(own, now),
                )
            )
        streak, best = await self._streaks(session, now)
        return DailyArchive(id=0, days=days, total=total, streak=streak, best_streak=best)

    # --- playing --------------------------------------------------------------------------------------

    async def start(self, session: Session, day: str | None) -> DailyAttempt:
        """Start (or resume) an attempt: today's is a registered player's counted one, resumed while it runs and
        ``daily_attempt_used`` once it ended; a guest's, a bot's and a past day's are uncounted and always new."""
        now = await self.now_ms()
        deal = await self.deal_of(day, now)
        today = now < deal.closes_at
        counted = today and session.account is not None and not session.bot
        key = f"{COUNTED_PREFIX}{session.player}" if counted else f"u{secrets.token_hex(8)}"
        deadline = now + deal.time_limit_ms
        if today:
            deadline = min(deadline, deal.closes_at)
        handle = session.account if counted else None
        await self.store.start(deal.day, key, player=session.player, handle=handle, counted=counted, started_at=now, deadline=deadline)
        attempt = await self.store.attempt(deal.day, key)
        assert attempt is not None
        result = result_of(attempt, now)
        if counted and result.state is not AttemptState.PLAYING:
            raise ServiceError(
                ErrorCode.DAILY_ATTEMPT_USED, f"your counted attempt of {deal.day} is over; it shows when the day ends", expected=deal.closes_at
            )
        columns, bouquet = deal_texts(deal.seed)
        return DailyAttempt(
            id=0, attempt=attempt_id(deal.day, key), day=deal.day, counted=counted, columns=columns, bouquet=bouquet,
            started_at=attempt.facts.started_at, deadline=attempt.facts.deadline, moves=list(attempt.moves), result=result, now=now,
        )  # fmt: skip

    async def move(self, session: Session, attempt: str, seq: int, text: str) -> DailyMoved:
        """Check one move on the attempt's position (undo and the redeal are off) and record it; the attempt ends
        when the move cleared, blocked or (proven) killed the deal."""
        day, key = _split(attempt)
        now = await self.now_ms()
        stored, deal = await self._attempt_of(session, day, key)
        board = self._board(attempt, stored, deal)
        if seq != len(stored.moves):
            raise ServiceError(ErrorCode.OUT_OF_SEQUENCE, f"your next move number is {len(stored.moves)}, not {seq}", expected=len(stored.moves))
        try:
            action = parse_action(text)
            if action is Special.UNDO:
                raise ServiceError(IllegalMoveCode.UNDO_NOT_ALLOWED, "the daily deal is played without undo")
            if action is Special.REDEAL:
                raise ServiceError(IllegalMoveCode.REDEAL_NOT_ALLOWED, "the daily deal is played without the redeal")
            trial = board.copy()
            trial.play(action)
        except EngineError as error:
            raise ServiceError(error.code, error.message) from None
        ends = ENDS_WITH.get(trial.status(self.dead_check))
        entry = f"{now - stored.facts.started_at} {text.strip()}"
        made = await self._record(session, day, key, seq=seq, entry=entry, count=trial.foundation_count, ends=ends, now=now)
        self._boards[attempt] = (made, trial)
        self._boards.move_to_end(attempt)
        while len(self._boards) > 1024:
            self._boards.popitem(last=False)
        return await self._moved(session, day, key, now)

    async def stop_attempt(self, session: Session, attempt: str) -> DailyMoved:
        """End an attempt where it stands (``resigned``)."""
        day, key = _split(attempt)
        now = await self.now_ms()
        stored, _ = await self._attempt_of(session, day, key)
        await self._record(session, day, key, seq=None, entry="", count=stored.facts.count, ends=AttemptState.RESIGNED, now=now)
        return await self._moved(session, day, key, now)

    # --- helpers ---------------------------------------------------------------------------------------

    async def _record(self, session: Session, day: str, key: str, *, seq: int | None, entry: str, count: int, ends: AttemptState | None, now: int) -> int:
        try:
            made = await self.store.record(day, key, player=session.player, seq=seq, entry=entry, count=count, ends=ends, now=now)
        except StoreRefusal as refusal:
            raise ServiceError(refusal.code, _refusal_message(refusal.code), expected=refusal.expected) from None
        if ends is AttemptState.CLEARED and key.startswith(COUNTED_PREFIX):
            await self.store.mark_cleared(session.player, day)
        return made

    async def _moved(self, session: Session, day: str, key: str, now: int) -> DailyMoved:
        stored, _ = await self._attempt_of(session, day, key)
        return DailyMoved(id=0, attempt=attempt_id(day, key), seq=len(stored.moves), result=result_of(stored, now))

    async def _attempt_of(self, session: Session, day: str, key: str) -> tuple[StoredAttempt, DailyDeal]:
        stored = await self.store.attempt(day, key)
        deal = await self.store.deal(day)
        if stored is None or deal is None or stored.player != session.player:
            raise ServiceError(ErrorCode.UNKNOWN_ATTEMPT, "no attempt of yours has that id", field="attempt")
        return stored, deal

    def _board(self, attempt: str, stored: StoredAttempt, deal: DailyDeal) -> Board:
        """The attempt's position after its stored moves (this process's copy when it is current)."""
        cached = self._boards.get(attempt)
        if cached is not None and cached[0] == len(stored.moves):
            return cached[1]
        board = Board.deal(deal.seed, Rules(Profile(deal.profile)))
        for move in stored.moves:
            board.play(parse_action(move))
        return board

    async def _own(self, session: Session, day: str) -> StoredAttempt | None:
        if session.account is None:
            return None
        return await self.store.attempt(day, f"{COUNTED_PREFIX}{session.player}")

    async def _streaks(self, session: Session, now: int) -> tuple[int, int]:
        if session.account is None:
            return 0, 0
        return streaks(await self.store.cleared_days(session.player), day_of(now))

    async def _over(self, day: str, now: int) -> DailyDeal:
        deal = await self.deal_of(day, now)
        if now < deal.closes_at:
            raise ServiceError(
                ErrorCode.DAILY_NOT_OVER, f"the leaderboard of {day} opens when the day ends", field="day", expected=deal.closes_at
            )
        return deal

    async def _finished_day(self, deal: DailyDeal, now: int) -> FinishedDay:
        """A finished day's ranked attempts and statistics (computed once per process: a finished day never changes)."""
        finished = self._finished.get(deal.day)
        if finished is None:
            attempts = {attempt.handle or attempt.player: attempt for attempt in await self.store.counted_attempts(deal.day)}
            facts: dict[str, AttemptFacts] = {name: attempt.facts.settled(now) for name, attempt in attempts.items()}
            order = [attempts[name] for name, _ in ranked(facts)]
            finished = self._finished[deal.day] = FinishedDay(deal, order, statistics(facts.values()))
            while len(self._finished) > 64:
                self._finished.popitem(last=False)
        return finished

    @staticmethod
    def _entries(finished: FinishedDay, offset: int, limit: int, now: int) -> list[DailyEntry]:
        return [
            DailyEntry(rank=offset + number + 1, handle=attempt.handle or "", result=result_of(attempt, now))
            for number, attempt in enumerate(finished.ranked[offset : offset + limit])
        ]


def _stats(stats: DayStatistics) -> DailyStats:
    return DailyStats(players=stats.players, cleared=stats.cleared, clear_minutes=stats.clear_minutes)


def _split(attempt: str) -> tuple[str, str]:
    """The day and key of a wire attempt id; ServiceError ``unknown_attempt`` for a malformed one."""
    day, _, key = attempt.partition("/")
    try:
        day_start(day)
    except ValueError:
        raise ServiceError(ErrorCode.UNKNOWN_ATTEMPT, "no attempt of yours has that id", field="attempt") from None
    return day, key


def _refusal_message(code: ErrorCode) -> str:
    if code is ErrorCode.ATTEMPT_OVER:
        return "this attempt has ended"
    if code is ErrorCode.OUT_OF_SEQUENCE:
        return "that move number was played already"
    return "no attempt of yours has that id"
