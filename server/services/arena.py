"""Arena tournaments, the server's core: players join an arena, free players are paired round after round by score
(shared/arena.py), each pair's race is started through a callback, and each finished race is booked once with its
points (streaks, berserk) into the standings. Several processes may pair and book one arena at once: the claim and
the booking are atomic scripts (server/store/arena_store.py), so no player is in two races and no race counts twice.
docs/COMMUNITY.md "Arena tournaments" says what is there and what is not yet (the protocol's requests and pages).
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from server.services.errors import ServiceError
from server.store import ArenaStore
from shared.arena import ArenaGame, Standing, choose_pairs, standings
from shared.protocol import ErrorCode, Outcome

Clock = Callable[[], Awaitable[int]]
StartRace = Callable[[str, str, str, str], Awaitable[None]]
"""Starts the race of a pair: (arena, race id, player a, player b)."""

OPPOSITE = {Outcome.WON: Outcome.LOST, Outcome.LOST: Outcome.WON, Outcome.DRAW: Outcome.DRAW}


@dataclass(frozen=True, slots=True)
class Side:
    """One player's side of a finished arena race."""

    player: str
    berserk: bool
    moves: int


class ArenaService:
    """Arenas: joining, pausing, pairing rounds, booking results, standings."""

    def __init__(self, store: ArenaStore, now_ms: Clock, start_race: StartRace) -> None:
        self.store = store
        self.now_ms = now_ms
        self.start_race = start_race

    async def create(self, name: str, start_at: int, duration_ms: int) -> str:
        """A new arena from ``start_at`` for ``duration_ms``; its id."""
        arena = secrets.token_urlsafe(8)
        await self.store.create(arena, name, start_at, start_at + duration_ms)
        return arena

    async def join(self, arena: str, player: str, handle: str, rating: float) -> None:
        """Join (or come back from a pause): paired from the next round on; ``unknown_race`` for no such arena,
        ``race_over`` once its clock ran out."""
        await self._open(arena)
        await self.store.join(arena, player, handle, rating, await self.now_ms())

    async def pause(self, arena: str, player: str) -> None:
        """Stop being paired (a race under way still counts); ``join`` again to come back."""
        await self.store.pause(arena, player)

    async def pair_round(self, arena: str) -> list[tuple[str, str, str]]:
        """Pair the free players now and start their races; the (race id, a, b) started by this call."""
        times = await self.store.times(arena)
        now = await self.now_ms()
        if times is None or not times[0] <= now < times[1]:
            return []
        pairs = [(a, b, secrets.token_urlsafe(8)) for a, b in choose_pairs(await self.store.free_players(arena))]
        claimed = set(await self.store.claim(arena, pairs, now))
        started = [(race, a, b) for a, b, race in pairs if race in claimed]
        for race, a, b in started:
            await self.start_race(arena, race, a, b)
        return started

    async def finished(self, arena: str, race: str, first: Side, second: Side, outcome: Outcome) -> bool:
        """Book a finished race (``outcome`` from ``first``'s side) once, whichever processes report it; True if this
        call booked it."""
        ratings = await self.store.ratings(arena)
        games = {
            first.player: ArenaGame(race, second.player, outcome, first.berserk, first.moves, ratings.get(second.player, 0.0)),
            second.player: ArenaGame(race, first.player, OPPOSITE[outcome], second.berserk, second.moves, ratings.get(first.player, 0.0)),
        }
        return await self.store.book(arena, race, games, await self.now_ms())

    async def standings(self, arena: str) -> list[Standing]:
        """Everybody's line, best first (score, then performance)."""
        players = await self.store.ratings(arena)
        return standings({player: await self.store.games(arena, player) for player in players})

    async def _open(self, arena: str) -> None:
        times = await self.store.times(arena)
        if times is None:
            raise ServiceError(ErrorCode.UNKNOWN_RACE, f"there is no arena {arena[:16]!r}")
        if await self.now_ms() >= times[1]:
            raise ServiceError(ErrorCode.RACE_OVER, "this arena's clock has run out")
