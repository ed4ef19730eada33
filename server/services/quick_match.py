"""Quick match: two players asking for the same settings are paired and their race starts.

A player with nobody to pair with waits in seat 0 of an unlisted race of its
own, with an entry in the queue of its settings key. The next player with the
same settings takes that entry off the queue (atomically, in Lua: a waiting
player is handed to one pairer only, whichever process runs it) and joins the
race, which starts its countdown; the waiting player learns it from its race's
events (``player_joined``, ``countdown``).

Rated requests queue apart from unrated ones and pair by rating: the closest rating within a window that widens
the longer either player waits (:class:`RatingWindow`), never the same two players twice in a row while someone
else fits. As windows widen, each process retries the rated entries its connections hold every second; a
player paired that way is seated in the partner's race and its own waiting race closes (``paired``).

A race whose second player left the countdown goes back into its queue (:meth:`QuickMatchService.requeue`); should
someone else have queued meanwhile, the same retries pair the two unrated entries too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from server.services.background import BackgroundLoop
from server.services.dealer import Dealer, checked_profile, settings_key, settings_key_of
from server.services.errors import ServiceError
from server.services.lobby import LobbyService, Owner
from server.services.race import RaceService, SeatedRace, new_race_id
from server.services.ratings import check_rated
from server.store import Identity, NewRace, Partner, QueueEntry, QuickMatchStore, RaceRecord
from shared.protocol import CloseReason, ErrorCode, RaceSettings, RaceStatus


@dataclass(frozen=True, slots=True)
class RatingWindow:
    """How far apart two rated players' ratings may be to be paired, by how long the longer waiting one has waited."""

    base: int = 100
    """Points at once."""
    step_points: int = 50
    """Points added per step of waiting."""
    step_seconds: float = 5.0
    anyone_after_seconds: float = 60.0
    """After this long any two rated players of the queue are paired."""

    def as_args(self) -> tuple[int, int, int, int]:
        """The window as the pairing script takes it (points, points, ms, ms)."""
        return self.base, self.step_points, round(self.step_seconds * 1000), round(self.anyone_after_seconds * 1000)


RatingOf = Callable[[str, str], Awaitable[float]]
"""The current rating of a player (profile, player id) for pairing."""

UNJOINABLE = frozenset({ErrorCode.RACE_FULL, ErrorCode.RACE_CLOSED, ErrorCode.UNKNOWN_RACE})
"""A partner's race that cannot be joined any more (joined by id, closed, expired): pair with the next one."""
BARRED_PAIR = frozenset({ErrorCode.RATED_SAME_NETWORK, ErrorCode.RATED_PAIR_LIMIT})
"""Two players the ladder rules keep from a rated race together (docs/PLAYERS.md "Ladder rules")."""


class QuickMatchService:
    """Pairs players by settings; ``attempts`` bounds the partners tried per request."""

    def __init__(
        self,
        races: RaceService,
        lobby: LobbyService,
        store: QuickMatchStore,
        dealer: Dealer,
        *,
        attempts: int = 5,
        rating_of: RatingOf | None = None,
        window: RatingWindow | None = None,
        retry_seconds: float = 1.0,
    ) -> None:
        self.races = races
        self.lobby = lobby
        self.store = store
        self.dealer = dealer
        self.attempts = attempts
        self.rating_of = rating_of
        self.window = window or RatingWindow()
        self.retry_seconds = retry_seconds
        self._loop = BackgroundLoop("quick match: rated retries")
        lobby.requeue = self.requeue

    async def quick_match(self, who: Identity, settings: RaceSettings, owner: Owner) -> tuple[SeatedRace, bool]:
        """Join a waiting partner's race (False), or wait in a race of one's own (True). Replaces an earlier entry."""
        checked_profile(settings, self.dealer.seeds)
        check_rated(settings, who)
        if settings.rated:
            await self._refuse_if_playing_rated(who.player)
        async with self.lobby.place(owner, replacing_queue=True):
            player = who.player
            key = settings_key(settings)
            rating = await self.rating_of(settings.profile, player) if settings.rated and self.rating_of is not None else None
            earlier = await self.store.entry_of(player)
            if earlier is not None and await self.store.cancel(earlier):
                await self.lobby.abandon(earlier.race_id, player, reason=CloseReason.CANCELLED)
            own: tuple[NewRace, SeatedRace] | None = None
            for _ in range(self.attempts):
                partner = await self.store.pair_or_wait(
                    key, player, None if own is None else own[1].info.race, rating=rating, window=self.window.as_args()
                )
                if partner is None and own is None:
                    own = await self._open_own_race(who, settings)
                    continue
                if partner is None:
                    assert own is not None
                    seated = own[1]
                    await self.lobby.hold_queue(owner, QueueEntry(settings_key=key, race_id=seated.info.race, player=player), seated.record)
                    owner.identity = who
                    return seated, True
                joined = await self._join(partner, who)
                if joined is not None:
                    if own is not None:
                        await self.races.discard(own[1].info.race)
                        await self.dealer.give_back(own[0])
                    return joined, False
            raise ServiceError(ErrorCode.UNAVAILABLE, "could not pair you right now; try again")

    async def cancel(self, player: str, owner: Owner) -> None:
        """Leave the queue and close the waiting race; ``not_queued`` if the player was paired meanwhile."""
        entry = await self.store.entry_of(player)
        if entry is None or not await self.store.cancel(entry):
            raise ServiceError(ErrorCode.NOT_QUEUED, "you are not waiting for a quick match")
        if owner.queue is not None and owner.queue.race_id == entry.race_id:
            owner.queue = None
        await self.lobby.abandon(entry.race_id, player, reason=CloseReason.CANCELLED)

    async def requeue(self, record: RaceRecord) -> None:
        """The second player left the countdown of quick-match race ``record``, which waits again: its creator goes
        back into the queue of its settings (at the back; a rated wait, and so its window, counts from its request),
        unless it asked for another quick match meanwhile. Its connection's process keeps the entry's heartbeat."""
        if record.status is not RaceStatus.WAITING or not record.seats:
            return
        player = record.seats[0].player
        rating = await self.rating_of(record.settings.profile, player) if record.settings.rated and self.rating_of is not None else None
        entry = QueueEntry(settings_key=settings_key_of(record), race_id=record.race_id, player=player)
        await self.store.requeue(entry, rating=rating, queued_at=record.created_at)

    # --- widening rated windows -----------------------------------------------------------------

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._loop.stop()

    async def run(self) -> None:
        """Retry the waiting entries of this process's connections every ``retry_seconds``, until stopped."""

        async def step() -> None:
            await asyncio.sleep(self.retry_seconds)
            await self.retry_waiting_once()

        await self._loop.run(step, retry_seconds=self.retry_seconds)

    async def retry_waiting_once(self) -> int:
        """Pair each entry held here that waits while someone fits: a rated one whose window now reaches someone, an
        unrated one whose queue holds another entry (a race queued again after its second player left the countdown,
        while someone else queued). Returns how many were paired."""
        held = [(owner, owner.queue) for owner in self.lobby.owners() if owner.queue is not None]
        unrated = {entry.settings_key for _, entry in held if not is_rated(entry)}
        crowded = await self.store.crowded(unrated) if unrated else set()
        paired = 0
        for owner, entry in held:
            if not is_rated(entry) and entry.settings_key not in crowded:
                continue
            paired += await self._retry_one(owner, entry)
        return paired

    async def _retry_one(self, owner: Owner, entry: QueueEntry) -> int:
        """Try to pair one waiting entry held here: 1 if it was paired (and told), 0 if it still waits."""
        who, tell = owner.identity, owner.on_paired
        if who is None or tell is None or (is_rated(entry) and self.rating_of is None):
            return 0
        record = await self.races.store.load_race(entry.race_id)
        if record is None or record.status is not RaceStatus.WAITING or owner.queue != entry:
            return 0
        rating = await self.rating_of(record.settings.profile, who.player) if is_rated(entry) and self.rating_of is not None else None
        partner = await self.store.pair_or_wait(
            entry.settings_key, who.player, entry.race_id, rating=rating, waiting=True, window=self.window.as_args()
        )
        if partner is None:
            return 0
        owner.queue = None
        joined = await self._join_unless_busy(partner, who)
        if joined is None:  # the partner's race went away meanwhile: wait again
            await self.store.requeue(entry, rating=rating, queued_at=record.created_at)
            owner.queue = entry
            return 0
        await self.races.leave(entry.race_id, who.player, next_deal=record.deal, reason=CloseReason.PAIRED, new_race=joined.info.race)
        await self.lobby.store.close(entry.race_id, None)
        await tell(joined)
        return 1

    async def _join_unless_busy(self, partner: Partner, who: Identity) -> SeatedRace | None:
        """:meth:`_join`, with None also when ``who`` started another rated race meanwhile: it waits until that is
        over."""
        try:
            return await self._join(partner, who)
        except ServiceError as error:
            if error.code is not ErrorCode.RATED_BUSY:
                raise
            return None

    async def _open_own_race(self, who: Identity, settings: RaceSettings) -> tuple[NewRace, SeatedRace]:
        race = await self.dealer.deal(settings, origin="quick_match")
        try:
            return race, await self.races.create(new_race_id(), who, race)
        except BaseException:
            await self.dealer.give_back(race)
            raise

    async def _refuse_if_playing_rated(self, player: str) -> None:
        books = self.races.books
        if books is not None:
            await books.refuse_if_playing_rated(player)

    async def _join(self, partner: Partner, who: Identity) -> SeatedRace | None:
        """Join the partner's race; None when it cannot be joined any more, or when the partner plays another rated
        race (it queued before that one started): its entry is cancelled and the next partner tried. ``rated_busy``
        only when ``who`` itself plays another rated race."""
        try:
            return await self.lobby.join(partner.race_id, who)
        except ServiceError as error:
            if error.code in UNJOINABLE:
                return None
            if error.code in BARRED_PAIR:  # the partner waits on for someone else
                record = await self.races.store.load_race(partner.race_id)
                if record is not None:
                    await self.requeue(record)
                return None
            if error.code is ErrorCode.RATED_BUSY:
                await self._refuse_if_playing_rated(who.player)
                await self.lobby.abandon(partner.race_id, partner.player, reason=CloseReason.CANCELLED)
                return None
            raise


def is_rated(entry: QueueEntry) -> bool:
    """Whether the entry waits in a rated queue (pairing by rating)."""
    return "/rated=1/" in entry.settings_key + "/"
