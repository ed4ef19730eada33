"""Arena tournaments in Redis: each arena's players, who is free, busy or paused, scores and finished races
(docs/STORAGE.md "Arena tournaments"). An arena's keys share the hash tag ``{arena:<id>}``; pairing and booking a result
are one script each, so several processes pair and book one arena without putting a player in two races or booking a
race twice."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from server.store import keys
from server.store.connection import RedisClient, repeatable
from server.store.errors import translate_errors
from server.store.scripts import Scripts, script_arguments
from shared.arena import ArenaGame, FreePlayer, score
from shared.protocol import Outcome


def _game(text: bytes) -> ArenaGame:
    fields = json.loads(text)
    return ArenaGame(fields["race"], fields["opponent"], Outcome(fields["outcome"]), fields["berserk"], fields["moves"], fields["opponent_rating"])


@translate_errors
class ArenaStore:
    """One store for every arena."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self.scripts = Scripts(redis)

    @repeatable
    async def create(self, arena: str, name: str, start_at: int, end_at: int) -> None:
        """Store a new arena."""
        await self.redis.hset(keys.arena_keys(arena)["meta"], mapping={"name": name, "start_at": start_at, "end_at": end_at})

    @repeatable
    async def times(self, arena: str) -> tuple[int, int] | None:
        """An arena's start and end (ms), None if there is no such arena."""
        stored: Any = await self.redis.hmget(keys.arena_keys(arena)["meta"], ["start_at", "end_at"])
        return None if stored[0] is None else (int(stored[0]), int(stored[1]))

    @repeatable
    async def join(self, arena: str, player: str, handle: str, rating: float, now: int) -> None:
        """Add a player (or bring a paused one back): free for pairing unless it is racing."""
        names = keys.arena_keys(arena)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(names["players"], player, json.dumps({"handle": handle, "rating": rating}))
            pipe.srem(names["paused"], player)
            pipe.zadd(names["scores"], {player: 0}, nx=True)
            await pipe.execute()
        if not await self.redis.hexists(names["busy"], player):
            await self.redis.zadd(names["free"], {player: now}, nx=True)

    @repeatable
    async def pause(self, arena: str, player: str) -> None:
        """Take a player out of the pairing (its race under way still counts)."""
        names = keys.arena_keys(arena)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.sadd(names["paused"], player)
            pipe.zrem(names["free"], player)
            await pipe.execute()

    @repeatable
    async def free_players(self, arena: str) -> list[FreePlayer]:
        """The players waiting for a race, with their scores, ratings and last opponents."""
        names = keys.arena_keys(arena)
        free: Any = await self.redis.zrange(names["free"], 0, -1)
        players = [member.decode() for member in free]
        if not players:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hmget(names["players"], players)
            pipe.zmscore(names["scores"], players)
            for player in players:
                pipe.lindex(keys.arena_games(arena, player), -1)
            stored, scores, *lasts = await pipe.execute()
        found = []
        for player, entry, points, last in zip(players, stored, scores, lasts, strict=True):
            rating = json.loads(entry)["rating"] if entry else 0.0
            found.append(FreePlayer(player, int(points or 0), float(rating), _game(last).opponent if last else None))
        return found

    async def claim(self, arena: str, pairs: list[tuple[str, str, str]], now: int) -> list[str]:
        """Take the pairs (a, b, race id) whose players are both still free, atomically; the race ids taken."""
        names = keys.arena_keys(arena)
        times = await self.times(arena)
        end_at = 0 if times is None else times[1]
        claimed: Any = await self.scripts.arena_claim(
            keys=[names["free"], names["busy"]], args=script_arguments(pairs=[list(pair) for pair in pairs], now=now, end_at=end_at)
        )
        return [race.decode() for race in claimed]

    @repeatable
    async def games(self, arena: str, player: str) -> list[ArenaGame]:
        """A player's finished races in the arena, oldest first."""
        stored: Any = await self.redis.lrange(keys.arena_games(arena, player), 0, -1)
        return [_game(text) for text in stored]

    @repeatable
    async def ratings(self, arena: str) -> dict[str, float]:
        """Every player of the arena and its rating when it joined."""
        stored: Any = await self.redis.hgetall(keys.arena_keys(arena)["players"])
        return {player.decode(): float(json.loads(entry)["rating"]) for player, entry in stored.items()}

    @repeatable
    async def book(self, arena: str, race: str, games: dict[str, ArenaGame], now: int) -> bool:
        """Book a finished race of two players (``games``: each one's side) once; True if this call booked it."""
        names = keys.arena_keys(arena)
        (a, game_a), (b, game_b) = games.items()
        times = await self.times(arena)
        end_at = 0 if times is None else times[1]
        history = {player: [*await self.games(arena, player), game] for player, game in games.items()}
        booked = await self.scripts.arena_result(
            keys=[names["booked"], names["busy"], names["free"], names["scores"], names["paused"], keys.arena_games(arena, a), keys.arena_games(arena, b)],
            args=script_arguments(
                race=race, a=a, b=b, game_a=json.dumps(asdict(game_a)), game_b=json.dumps(asdict(game_b)),
                score_a=score(history[a]), score_b=score(history[b]), now=now, end_at=end_at,
            ),
        )  # fmt: skip
        return bool(booked)
