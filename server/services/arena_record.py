"""An arena tournament's record: the table, each player's races with their points, and the servers' signature over
both (shared/arena_record.py), which ``flowergarden verify`` checks. The arena's data is kept for good (docs/STORAGE.md
"Arena tournaments"), so the record of a finished arena can be asked for at any time.
"""

from __future__ import annotations

from collections.abc import Callable

from server.services.arena import ArenaService
from server.store import ArenaStore
from shared.arena import game_points
from shared.arena_record import arena_record_digest
from shared.protocol import ArenaGameLine, ArenaPlayerRecord, ArenaRecordReply, as_map


class ArenaRecords:
    """Assembles and signs arena records."""

    def __init__(self, arenas: ArenaService, store: ArenaStore, *, sign: Callable[[bytes], str] | None = None) -> None:
        """``sign``: signs a record's digest (server/record_signing.py); None: records carry no signature."""
        self.arenas = arenas
        self.store = store
        self.sign = sign

    async def record(self, request_id: int, arena: str) -> ArenaRecordReply:
        """The arena's record as it stands now (``final`` once nothing can change it); ``unknown_arena``."""
        info = await self.arenas.info(arena)
        ratings = await self.store.ratings(arena)
        who = await self.store.identities(arena)
        players = []
        for player in sorted(ratings):
            games = await self.store.games(arena, player)
            lines = [
                ArenaGameLine(race=game.race, opponent=game.opponent, outcome=game.outcome, berserk=game.berserk, moves=game.moves,
                              opponent_rating=game.opponent_rating, points=game_points(games[:index], game))
                for index, game in enumerate(games)
            ]  # fmt: skip
            identity = who[player]
            players.append(ArenaPlayerRecord(player=player, handle=identity.account or identity.name, rating=ratings[player], games=lines))
        standings = await self.arenas.lines(arena)
        final = await self.arenas.now_ms() >= info.end_at and not await self.store.busy(arena)
        reply = ArenaRecordReply(id=request_id, arena=info, final=final, players=players, standings=standings)
        if self.sign is None:
            return reply
        signed = {name: value for name, value in as_map(reply).items() if name not in ("type", "id", "signature")}
        return ArenaRecordReply(
            id=request_id, arena=info, final=final, players=players, standings=standings, signature=self.sign(arena_record_digest(signed))
        )
