"""Rated races and the books of registered players: ratings fixed at the start, booked once the race is over.

When both seats of a rated race are taken, both players are claimed (one rated race at a time per player) and
each one's Glicko-2 change is computed for the three possible outcomes; the race keeps them, so the ``result``
event (written by the script that decides the race) carries the change of the actual outcome for both players,
atomically with the result. Once the race is over a booking — any process, once, by one script — writes the
new ratings, the leaderboard, both histories and the stats, and releases the claims.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from server.services.background import BackgroundLoop
from server.services.errors import ServiceError
from server.store import (
    Identity,
    PairRules,
    PairSignals,
    PlayerRecords,
    PlayerStore,
    RaceRecord,
    RaceStore,
    RatedRefusal,
    SeatBooking,
    SeatRecord,
    StoredRating,
)
from shared.glicko2 import Game, Rating, aged, update
from shared.protocol import AttemptState, ErrorCode, Outcome, RaceSettings, RaceStatus

OUTCOMES: Final = (("win", 1.0), ("draw", 0.5), ("loss", 0.0))
"""Each rated race's possible outcomes for one player and their Glicko-2 scores."""


@dataclass(frozen=True, slots=True)
class LadderRules:
    """What keeps the ladder from being farmed (docs/PLAYERS.md "Ladder rules"; the config table ``[ladder]``)."""

    min_moves: int = 5
    """A rated race in which a player made fewer moves than this is aborted: rated for nobody (0: no such rule)."""
    min_seconds: float = 30.0
    """A rated race that ends sooner than this after its start is aborted too (0: no such rule)."""
    same_address_window_seconds: float = 24 * 3600.0
    """Two accounts seen on one client address (IPv4, IPv6 /64) within this long play no rated race against each
    other: ``rated_same_network`` (0: no such rule)."""
    pair_races_per_day: int = 5
    """Rated races two accounts may begin against each other per 24 hours; more get ``rated_pair_limit`` (0: no limit)."""
    leaderboard_min_opponents: int = 5
    """Distinct opponents of booked rated races a player needs to be listed on the leaderboard."""
    signals_days: int = 30
    """How long a pair's signals (``flowergarden admin pairs``) are kept after its last one."""

    def pair_rules(self) -> PairRules:
        """What the claim script checks of a pair."""
        return PairRules(
            address_window_ms=round(self.same_address_window_seconds * 1000),
            pair_limit=self.pair_races_per_day,
            pair_window_ms=DAY_MS,
            signals_ttl_ms=self.signals_days * DAY_MS,
        )


DAY_MS: Final = 24 * 3600 * 1000


@dataclass(frozen=True, slots=True)
class RatingPolicy:
    """How ratings behave (docs/PROTOCOL.md "Ratings")."""

    provisional_deviation: float = 110.0
    """A rating whose deviation is above this is provisional: shown with a ``?`` and left off the leaderboard."""
    period_ms: int = DAY_MS
    """The deviation grows by one Glicko-2 rating period of the player's volatility per day without a rated race."""
    record_ttl_ms: int = 0
    """How long a rated race's record is kept once finished (0: forever)."""
    claim_ttl_ms: int = DAY_MS
    """How long a player stays claimed by a rated race that never finishes (the race's live TTL)."""
    ladder: LadderRules = field(default_factory=LadderRules)

    def provisional(self, deviation: float) -> bool:
        """Whether a rating of this deviation is provisional."""
        return deviation > self.provisional_deviation


def check_rated(settings: RaceSettings, who: Identity) -> None:
    """Refuse a rated race the settings or the player cannot have: an anonymous player, a chosen seed, undo, hints."""
    if not settings.rated:
        return
    if settings.seed is not None:
        raise ServiceError(ErrorCode.BAD_FIELD, "a rated race is dealt by the server: choose no seed", field="settings.rated")
    if settings.undo:
        raise ServiceError(ErrorCode.BAD_FIELD, "a rated race allows no undo", field="settings.rated")
    if settings.hints:
        raise ServiceError(ErrorCode.BAD_FIELD, "a rated race allows no hints: hints are for casual races", field="settings.hints")
    if who.account is None:
        raise ServiceError(ErrorCode.ACCOUNT_REQUIRED, "rated races are for registered players: register or log in first")


def current_rating(stored: StoredRating | None, now_ms: int, policy: RatingPolicy) -> Rating:
    """A stored rating with its deviation grown by the time since the player's last rated race (a new player's default)."""
    if stored is None:
        return Rating()
    return aged(Rating(stored.rating, stored.deviation, stored.volatility), max(0, now_ms - stored.last_at) / policy.period_ms)


def outcome_of(record: RaceRecord, slot: int) -> Outcome:
    """The finished race from the side of seat ``slot``."""
    if record.winner is None:
        return Outcome.DRAW
    return Outcome.WON if record.winner == slot else Outcome.LOST


_RESULT_OF: Final = {Outcome.WON: "win", Outcome.LOST: "loss", Outcome.DRAW: "draw"}
"""The outcome's name in the race hash's rating fields (``rating_<slot>_<win|draw|loss>``)."""


class PlayerBooks:
    """Claims and ratings of rated races at the join, and the booking of every finished race with a registered player."""

    def __init__(
        self, store: PlayerStore, races: RaceStore, policy: RatingPolicy | None = None, *, records: PlayerRecords | None = None,
        interval: float = 0.25,
    ) -> None:
        """``store``: what is live (claims, the races waiting to be booked); ``records``: the lasting books (the
        database's, else ``store`` itself)."""
        self.store = store
        self.records: PlayerRecords = records or store
        self.races = races
        self.policy = policy or RatingPolicy()
        self.interval = interval
        self._wake = asyncio.Event()
        self._loop = BackgroundLoop("players: booking")

    # --- at the join ---------------------------------------------------------------------------

    async def before_join(self, record: RaceRecord, joiner: Identity) -> dict[str, str]:
        """For a rated race: claim both players and compute each one's rating change per outcome (the fields the race
        keeps). ``account_required`` or ``rated_busy`` refuse the join."""
        if not record.settings.rated or record.status is not RaceStatus.WAITING or len(record.seats) != 1:
            return {}  # not rated, or the join script refuses it anyway
        if joiner.account is None:
            raise ServiceError(ErrorCode.ACCOUNT_REQUIRED, "rated races are for registered players: register or log in first")
        players = (record.seats[0].player, joiner.player)
        handles = (record.seats[0].account or "", joiner.account)
        rules = self.policy.ladder.pair_rules()
        refusal = await self.store.begin_rated(record.race_id, players, handles, self.policy.claim_ttl_ms, rules)
        if refusal is not None and refusal.holder is not None:
            await self._still_playing(refusal.holder, players)
            refusal = await self.store.begin_rated(record.race_id, players, handles, self.policy.claim_ttl_ms, rules)
        if refusal is not None:
            raise _refused(refusal)
        now = await self.races.now_ms()
        current = [current_rating(stored, now, self.policy) for stored in await self.records.ratings(record.settings.profile, players)]
        keep: dict[str, str] = {}
        for slot in (0, 1):
            before, opponent = current[slot], current[1 - slot]
            for name, score in OUTCOMES:
                after = update(before, [Game(opponent, score)])
                change = {
                    "before": round(before.rating),
                    "after": round(after.rating),
                    "delta": round(after.rating) - round(before.rating),
                    "deviation": round(after.deviation),
                    "provisional": self.policy.provisional(after.deviation),
                }
                keep[f"rating_{slot}_{name}"] = json.dumps(change)
                keep[f"glicko_{slot}_{name}"] = f"{after.rating!r},{after.deviation!r},{after.volatility!r}"
        keep["abort_moves"] = str(self.policy.ladder.min_moves)  # the abort rule this race is decided by (common.lua)
        keep["abort_ms"] = str(round(self.policy.ladder.min_seconds * 1000))
        return keep

    async def seen(self, player: str, address: str) -> None:
        """An account's player said hello, logged in or registered from client ``address``: remembered for the
        same-address rule of rated races (nothing when the rule is off)."""
        window_ms = round(self.policy.ladder.same_address_window_seconds * 1000)
        if window_ms > 0:
            await self.store.saw(player, address, window_ms)

    async def rated_race_of(self, player: str) -> str | None:
        """The rated race ``player`` still plays (counting down or running), or None: a quick match that would pair it
        is refused ``rated_busy`` up front, and a pairing refused so tells whose race is in the way."""
        holder = await self.store.rated_claim(player)
        if holder is None or not await self._still_playing(holder, [player]):
            return None
        return holder

    async def refuse_if_playing_rated(self, player: str) -> None:
        """``rated_busy`` for a player still in another rated race: it can neither open, join nor be paired for one
        (a rated race it opened could never be joined: every join would be refused ``rated_busy``)."""
        if (holder := await self.rated_race_of(player)) is not None:
            raise ServiceError(ErrorCode.RATED_BUSY, f"you are still playing the rated race {holder}: ask again once it is over")

    async def _still_playing(self, holder: str, players: Sequence[str]) -> bool:
        """Whether rated race ``holder``, which claims some of ``players``, is still under way; a finished one is booked
        now (which releases its claims) and a claim nothing holds any more is released."""
        earlier = await self.races.load_race(holder)
        if earlier is not None and earlier.status is RaceStatus.FINISHED:  # over but not booked yet: book it now
            await self.book(earlier)
            return False
        if earlier is None or earlier.status not in (RaceStatus.COUNTDOWN, RaceStatus.RUNNING):  # a claim nothing holds any more
            await self.store.end_rated(holder, players)
            return False
        return True

    async def join_failed(self, record: RaceRecord, joiner: Identity) -> None:
        """Release the joiner's claim of a rated join the race refused (the creator's may belong to a pairing that
        did succeed; a stale one is released when it is next in the way)."""
        if record.settings.rated:
            await self.store.end_rated(record.race_id, [joiner.player])

    async def joined(self, race_id: str, start_at: int, seats: Sequence[Identity]) -> None:
        """Both seats are taken: book the result once there is one (for registered players only)."""
        if any(seat.account is not None for seat in seats):
            await self.store.track(race_id, start_at)

    async def seat_freed(self, record: RaceRecord) -> None:
        """The second player left the countdown of ``record``: nothing will be booked for that pairing."""
        await self.store.untrack(record.race_id)
        if record.settings.rated:
            await self.store.end_rated(record.race_id, [seat.player for seat in record.seats])

    # --- booking ------------------------------------------------------------------------------

    def notify(self) -> None:
        """A race may just have finished: book without waiting for the next round."""
        self._wake.set()

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._loop.stop()
        self._wake.set()

    async def run(self) -> None:
        """Book finished races until stopped (every ``interval``, and at once when notified)."""

        async def step() -> None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)
            self._wake.clear()
            if self._loop.running:
                await self.book_once()

        await self._loop.run(step, retry_seconds=self.interval)

    async def book_once(self) -> int:
        """Book every pending race that is over; forget those that will never be. Returns how many were booked."""
        pending = await self.store.pending()
        statuses = await self.races.statuses(pending)
        booked = 0
        for race_id, (status, _created_at) in statuses.items():
            if status is RaceStatus.FINISHED:
                record = await self.races.load_race(race_id)
                if record is not None and await self.book(record):
                    booked += 1
            elif status in (None, RaceStatus.CLOSED, RaceStatus.WAITING):
                await self.store.untrack(race_id)
        return booked

    def _booking(self, record: RaceRecord, seat: SeatRecord, kept: dict[str, str], aborted: str | None) -> SeatBooking:
        """One registered seat's booking: its history item, stats and the rating change fixed at the join (``kept``)."""
        assert record.finished_at is not None and seat.account is not None
        outcome = outcome_of(record, seat.slot)
        result = _RESULT_OF[outcome]
        opponent = record.seats[1 - seat.slot]
        change = kept.get(f"rating_{seat.slot}_{result}")
        glicko = kept.get(f"glicko_{seat.slot}_{result}")
        rating = None
        if glicko is not None:
            value, deviation, volatility = (float(part) for part in glicko.split(","))
            rating = StoredRating(value, deviation, volatility, games=0, last_at=record.finished_at)
        time_ms = max(0, seat.ended_at - (record.start_at or seat.ended_at))
        item: dict[str, Any] = {
            "race": record.race_id,
            "finished_at": record.finished_at,
            "profile": record.settings.profile,
            "rated": record.settings.rated,
            "slot": seat.slot,
            "outcome": outcome,
            "reason": record.result_reason or "",
            "count": seat.count,
            "ended": seat.state,
            "time_ms": time_ms,
            "moves": seat.moves,
            "opponent": {"player": opponent.player, "name": opponent.name, "account": opponent.account, "bot": opponent.bot},
            "rating": None if change is None else json.loads(change),
            "aborted": aborted,
            "ghost": record.settings.ghost,
        }
        return SeatBooking(
            player=seat.player,
            handle=seat.account,
            bot=seat.bot,
            profile=record.settings.profile,
            opponent=opponent.player,
            item=item,
            outcome=outcome,
            cleared=seat.state is AttemptState.CLEARED,
            time_ms=time_ms,
            count=seat.count,
            rating=rating,
            provisional=rating is None or self.policy.provisional(rating.deviation),
        )

    async def book(self, record: RaceRecord) -> bool:
        """Book a finished race for its registered players (once: False if it was booked already). An aborted rated
        race changes no rating and is counted among its pair's signals for the operators."""
        assert record.finished_at is not None
        names = [f"{kind}_{seat.slot}_{_RESULT_OF[outcome_of(record, seat.slot)]}" for seat in record.seats for kind in ("rating", "glicko")]
        kept = await self.races.kept_fields(record.race_id, [*names, "aborted"]) if record.settings.rated else {}
        aborted = kept.pop("aborted", None)
        if aborted is not None:
            kept = {}
        bookings = [self._booking(record, seat, kept, aborted) for seat in record.seats if seat.account is not None]
        ladder = self.policy.ladder
        booked = await self.records.book(
            record.race_id, record.finished_at, record.settings.profile, bookings, min_opponents=ladder.leaderboard_min_opponents
        )
        if self.records is not self.store:  # booked elsewhere (or before): release the race here
            await self.store.settle_booked(record.race_id, [seat.player for seat in record.seats])
        if booked and aborted is not None and len(record.seats) == 2:
            first, second = record.seats
            await self.store.signal_pair(
                (first.player, second.player), (first.account or "", second.account or ""), "aborted",
                record.finished_at, ladder.signals_days * DAY_MS,
            )  # fmt: skip
        return booked

    async def suspicious_pairs(self, limit: int = 100) -> list[PairSignals]:
        """The pairs of accounts operators should look at, newest signal first (``flowergarden admin pairs``)."""
        return await self.store.suspicious_pairs(limit)


def _refused(refusal: RatedRefusal) -> ServiceError:
    """The error a refused rated claim answers the join with."""
    if refusal.code is ErrorCode.RATED_SAME_NETWORK:
        return ServiceError(
            refusal.code, "these two accounts were seen on the same network address recently: race them unrated", field="settings.rated"
        )
    if refusal.code is ErrorCode.RATED_PAIR_LIMIT:
        return ServiceError(
            refusal.code, f"these two accounts played {refusal.limit} rated races against each other today: race them unrated",
            field="settings.rated", expected=refusal.limit,
        )  # fmt: skip
    return ServiceError(ErrorCode.RATED_BUSY, "a player of this race is playing another rated race; try again when it is over")
