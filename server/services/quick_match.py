"""Quick match: two players asking for the same settings are paired and their race starts.

A player with nobody to pair with waits in seat 0 of an unlisted race of its
own, with an entry in the queue of its settings key. The next player with the
same settings takes that entry off the queue (atomically, in Lua: a waiting
player is handed to one pairer only, whichever process runs it) and joins the
race, which starts its countdown; the waiting player learns it from its race's
events (``player_joined``, ``countdown``).
"""

from __future__ import annotations

from server.services.dealer import Dealer, checked_profile, settings_key
from server.services.errors import ServiceError
from server.services.lobby import LobbyService, Owner
from server.services.race import RaceService, SeatedRace, new_race_id
from server.store import NewRace, Partner, QueueEntry, QuickMatchStore
from shared.protocol import CloseReason, ErrorCode, RaceSettings

UNJOINABLE = frozenset({ErrorCode.RACE_FULL, ErrorCode.RACE_CLOSED, ErrorCode.UNKNOWN_RACE})
"""A partner's race that cannot be joined any more (joined by id, closed, expired): pair with the next one."""


class QuickMatchService:
    """Pairs players by settings; ``attempts`` bounds the partners tried per request."""

    def __init__(self, races: RaceService, lobby: LobbyService, store: QuickMatchStore, dealer: Dealer, *, attempts: int = 5) -> None:
        self.races = races
        self.lobby = lobby
        self.store = store
        self.dealer = dealer
        self.attempts = attempts

    async def quick_match(self, player: str, name: str, settings: RaceSettings, owner: Owner) -> tuple[SeatedRace, bool]:
        """Join a waiting partner's race (False), or wait in a race of one's own (True). Replaces an earlier entry."""
        checked_profile(settings, self.dealer.seeds)
        await self.lobby.make_room(owner, replacing_queue=True)
        key = settings_key(settings)
        earlier = await self.store.entry_of(player)
        if earlier is not None and await self.store.cancel(earlier):
            await self.lobby.abandon(earlier.race_id, player, reason=CloseReason.CANCELLED)
        own: tuple[NewRace, SeatedRace] | None = None
        for _ in range(self.attempts):
            partner = await self.store.pair_or_wait(key, player, None if own is None else own[1].info.race)
            if partner is None and own is None:
                own = await self._open_own_race(player, name, settings)
                continue
            if partner is None:
                assert own is not None
                seated = own[1]
                await self.lobby.hold_queue(owner, QueueEntry(settings_key=key, race_id=seated.info.race, player=player), seated.record)
                return seated, True
            joined = await self._join(partner, player, name)
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

    async def _open_own_race(self, player: str, name: str, settings: RaceSettings) -> tuple[NewRace, SeatedRace]:
        race = await self.dealer.deal(settings, origin="quick_match")
        try:
            return race, await self.races.create(new_race_id(), player, name, race)
        except BaseException:
            await self.dealer.give_back(race)
            raise

    async def _join(self, partner: Partner, player: str, name: str) -> SeatedRace | None:
        try:
            return await self.lobby.join(partner.race_id, player, name)
        except ServiceError as error:
            if error.code in UNJOINABLE:
                return None
            raise
