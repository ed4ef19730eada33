"""Rematch: after a finished race both players agree, and get a new race with the same settings and a new deal.

Each player sends ``rematch``; the first is an offer (an event tells the
opponent), the second creates the new race with both players seated in the
same seats (its countdown starts at once) and links it to the old race, whose
stream announces it to both. Linking is one script, so two concurrent accepts
cannot give the players two different rematches.
"""

from __future__ import annotations

from server.services.dealer import Dealer
from server.services.race import RaceService, SeatedRace, new_race_id


class RematchService:
    """Offers and accepts rematches of finished races."""

    def __init__(self, races: RaceService, dealer: Dealer) -> None:
        self.races = races
        self.dealer = dealer

    async def rematch(self, race_id: str, player: str) -> SeatedRace | None:
        """Offer a rematch (None), or accept one: the new race and the player's seat in it."""
        offer = await self.races.offer_rematch(race_id, player)
        if offer.rematch_race is not None:
            return await self.races.seated(offer.rematch_race, player)
        if not offer.agreed:
            return None
        record = await self.races.record(race_id)
        race = await self.dealer.rematch_of(record)
        new_id = new_race_id()
        first, second = record.seats
        try:
            await self.races.create(new_id, first.identity, race)
            # The second player accepted this race's spectator delay when it joined it; the rematch keeps it.
            accepted = self.races.policy.delay_of(record.settings) // 1000
            # Neither player's connection follows the new race yet (the accepting one does once seated, the offering
            # one when it syncs): an offerer who never does is away, and its grace period runs.
            await self.races.join(new_id, second.identity, accept_delay=accepted, expect_both=True)
            linked = await self.races.link_rematch(race_id, new_id)
        except BaseException:
            await self.races.discard(new_id)
            await self.dealer.give_back(race)
            raise
        if linked != new_id:  # the other player's accept linked its own a moment earlier
            await self.races.discard(new_id)
            await self.dealer.give_back(race)
        return await self.races.seated(linked, player)
