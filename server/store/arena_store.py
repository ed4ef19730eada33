"""Arena tournaments in Redis: each arena's players, who is free, busy or paused, scores and finished races
(docs/STORAGE.md "Arena tournaments"). An arena's keys share the hash tag ``{arena:<id>}``; pairing and booking a result
are one script each, so several processes pair and book one arena without putting a player in two races or booking a
race twice.

With a database, a finished arena goes to PostgreSQL (:class:`ArenaArchive`, :meth:`ArenaStore.archive_finished`,
run by the archiver): its meta, final table and every player's races written once, then its Redis keys are kept
only as a cache (a TTL); the reads of an arena fall back to the archive when Redis no longer has it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from server.store import keys
from server.store.connection import RedisClient, repeatable
from server.store.errors import translate_errors
from server.store.race_store import Identity
from server.store.scripts import Scripts, script_arguments
from shared.arena import ArenaGame, FreePlayer, score
from shared.protocol import Outcome


@dataclass(frozen=True, slots=True)
class ArenaMeta:
    """An arena's name, its clock (ms), the time limit of each of its races (s), and how it is played and found."""

    name: str
    start_at: int
    end_at: int
    time_limit: int
    rated: bool = False
    private: bool = True
    """Not listed (``arena_list``): joined by its link."""
    max_players: int = 0
    """The most players who may join; 0: no cap."""
    schedule: str = ""
    """The operator's recurring schedule that opened it; empty: none."""


@dataclass(frozen=True, slots=True)
class ArenaCounts:
    """How many players joined an arena and how many of its races are under way."""

    players: int
    races: int


def _meta(text: Mapping[str, str]) -> ArenaMeta:
    return ArenaMeta(
        text["name"], int(text["start_at"]), int(text["end_at"]), int(text.get("time_limit", "300")), rated=text.get("rated") == "1",
        private=text.get("private", "1") == "1", max_players=int(text.get("max_players", "0")), schedule=text.get("schedule", ""),
    )


def _game(text: bytes) -> ArenaGame:
    fields = json.loads(text)
    return ArenaGame(fields["race"], fields["opponent"], Outcome(fields["outcome"]), fields["berserk"], fields["moves"], fields["opponent_rating"])


class ArenaArchive(Protocol):
    """Where finished arenas go for good (PostgreSQL: :class:`server.store.arena_records_sql.PostgresArenaArchive`).
    Every method raises StoreUnavailable when the database cannot be reached."""

    async def put_arena(
        self, arena: str, meta: Mapping[str, str], players: Mapping[str, tuple[dict[str, Any], int]], games: Mapping[str, Sequence[ArenaGame]]
    ) -> bool:
        """Store a finished arena once: its meta fields, each player's join entry and final score, each player's
        races in order; False if it was stored already."""

    async def meta(self, arena: str) -> dict[str, str] | None:
        """A stored arena's meta fields."""

    async def entries(self, arena: str) -> dict[str, dict[str, Any]]:
        """Player id -> its join entry (``handle``, ``name``, ``account``, ``bot``, ``rating``) of a stored arena."""

    async def games(self, arena: str, player: str) -> list[ArenaGame]:
        """A player's races in a stored arena, oldest first."""

    async def archived(self, arenas: Sequence[str]) -> set[str]:
        """The arenas among ``arenas`` that are stored."""


@translate_errors
class ArenaStore:
    """One store for every arena."""

    def __init__(self, redis: RedisClient, *, archive: ArenaArchive | None = None, cache_ttl_ms: int = 86_400_000) -> None:
        """``archive``: where finished arenas go (None: they stay in Redis); ``cache_ttl_ms``: how long an archived
        arena's keys stay in Redis."""
        self.redis = redis
        self.scripts = Scripts(redis)
        self.archive = archive
        self.cache_ttl_ms = cache_ttl_ms

    @repeatable
    async def create(self, arena: str, meta: ArenaMeta) -> bool:
        """Store a new arena once (a listed one in the list too); False if it existed (another process opened it)."""
        fields = {name: str(int(value) if isinstance(value, bool) else value) for name, value in asdict(meta).items()}
        created = bool(await self.scripts.arena_create(keys=[keys.arena_keys(arena)["meta"]], args=script_arguments(fields=fields)))
        if not meta.private:
            await self.redis.zadd(keys.ARENAS_LISTED, {arena: meta.end_at})
        await self.redis.zadd(keys.ARENAS_ENDING, {arena: meta.end_at})
        return created

    @repeatable
    async def meta(self, arena: str) -> ArenaMeta | None:
        """An arena's name, times and rules, None if there is no such arena."""
        stored: Any = await self.redis.hgetall(keys.arena_keys(arena)["meta"])
        if stored:
            return _meta({name.decode(): value.decode() for name, value in stored.items()})
        archived = None if self.archive is None else await self.archive.meta(arena)
        return None if archived is None else _meta(archived)

    @repeatable
    async def counts(self, arena: str) -> ArenaCounts:
        """How many joined the arena and how many of its races are under way."""
        names = keys.arena_keys(arena)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hlen(names["players"])
            pipe.hvals(names["busy"])
            players, busy = await pipe.execute()
        if not players and self.archive is not None:
            return ArenaCounts(len(await self.archive.entries(arena)), 0)
        return ArenaCounts(int(players), len(set(busy)))

    @repeatable
    async def listed(self, now: int, finished: int) -> tuple[list[tuple[str, ArenaMeta]], list[tuple[str, ArenaMeta]]]:
        """The listed arenas whose clock runs or is to come (soonest end first), and the newest ``finished`` ones whose
        clock ran out (newest first)."""
        current: Any = await self.redis.zrangebyscore(keys.ARENAS_LISTED, f"({now}", "+inf", start=0, num=200)
        past: Any = await self.redis.zrevrangebyscore(keys.ARENAS_LISTED, now, "-inf", start=0, num=finished)
        return await self._metas([arena.decode() for arena in current]), await self._metas([arena.decode() for arena in past])

    async def _metas(self, arenas: list[str]) -> list[tuple[str, ArenaMeta]]:
        found = []
        for arena in arenas:
            meta = await self.meta(arena)
            if meta is not None:
                found.append((arena, meta))
        return found

    @repeatable
    async def schedules(self) -> dict[str, str]:
        """The operators' recurring arena schedules (``flowergarden admin tournament``): name -> spec text."""
        stored: Any = await self.redis.hgetall(keys.ARENA_SCHEDULES)
        return {name.decode(): spec.decode() for name, spec in stored.items()}

    @repeatable
    async def put_schedule(self, name: str, spec: str) -> None:
        """Add (or replace) an operator's recurring schedule."""
        await self.redis.hset(keys.ARENA_SCHEDULES, name, spec)

    @repeatable
    async def remove_schedule(self, name: str) -> bool:
        """Remove an operator's recurring schedule (arenas it opened stay); False if there was none of that name."""
        return bool(await self.redis.hdel(keys.ARENA_SCHEDULES, name))

    async def times(self, arena: str) -> tuple[int, int] | None:
        """An arena's start and end (ms), None if there is no such arena."""
        meta = await self.meta(arena)
        return None if meta is None else (meta.start_at, meta.end_at)

    @repeatable
    async def join(self, arena: str, who: Identity, rating: float, now: int, max_players: int = 0) -> bool:
        """Add a player (or bring a paused one back), atomically with the cap ``max_players`` (0: none): free for
        pairing unless it is racing. False if the arena is full (a player who joined before always comes back)."""
        names = keys.arena_keys(arena)
        entry = {"handle": who.account or who.name, "name": who.name, "account": who.account, "bot": who.bot, "rating": rating}
        joined: Any = await self.scripts.arena_join(
            keys=[names["players"], names["paused"], names["scores"], names["busy"], names["free"]],
            args=script_arguments(player=who.player, entry=json.dumps(entry), now=now, max_players=max_players),
        )
        return bool(joined[0])

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
            keys=[names["free"], names["busy"], names["claimed"]], args=script_arguments(pairs=[list(pair) for pair in pairs], now=now, end_at=end_at)
        )
        return [race.decode() for race in claimed]

    @repeatable
    async def identities(self, arena: str) -> dict[str, Identity]:
        """Who each player of the arena is (its identity when it joined)."""
        return {
            player: Identity(player, fields.get("name", fields["handle"]), fields.get("account"), fields.get("bot", False))
            for player, fields in (await self._entries(arena)).items()
        }

    async def _entries(self, arena: str) -> dict[str, dict[str, Any]]:
        """Player id -> its join entry (JSON in Redis; the archive's when Redis no longer has the arena)."""
        stored: Any = await self.redis.hgetall(keys.arena_keys(arena)["players"])
        if not stored and self.archive is not None:
            return await self.archive.entries(arena)
        return {player.decode(): json.loads(entry) for player, entry in stored.items()}

    @repeatable
    async def busy(self, arena: str) -> dict[str, str]:
        """Player -> race id of every race under way."""
        stored: Any = await self.redis.hgetall(keys.arena_keys(arena)["busy"])
        return {player.decode(): race.decode() for player, race in stored.items()}

    async def note(self, arena: str, **fields: str) -> None:
        """Append a note to the arena's feed (a pairing, a booked result), keeping its newest 1,000."""
        entry: dict[Any, Any] = dict(fields)
        await self.redis.xadd(keys.arena_keys(arena)["feed"], entry, maxlen=1000, approximate=True)

    @repeatable
    async def notes_after(self, arena: str, after: str) -> list[tuple[str, dict[str, str]]]:
        """The feed's notes after entry id ``after`` (``0-0``: all), oldest first."""
        entries: Any = await self.redis.xrange(keys.arena_keys(arena)["feed"], f"({after}" if after != "0-0" else "-", "+")
        return [(entry_id.decode(), {name.decode(): value.decode() for name, value in fields.items()}) for entry_id, fields in entries]

    async def confirm(self, arena: str, race: str, a: str, b: str, now: int) -> bool:
        """Confirm a claimed pair's race before creating it (the pair is then starting until :meth:`started`); False
        if the claim was released (do not create it)."""
        names = keys.arena_keys(arena)
        confirmed = await self.scripts.arena_confirm(keys=[names["claimed"], names["starting"]], args=script_arguments(race=race, a=a, b=b, now=now))
        return bool(confirmed)

    @repeatable
    async def started(self, arena: str, race: str) -> None:
        """A starting pair's race is created and its pairing noted."""
        await self.redis.hdel(keys.arena_keys(arena)["starting"], race)

    @repeatable
    async def stale_starting(self, arena: str, cutoff: int) -> list[tuple[str, str, str]]:
        """The pairs (race id, a, b) confirmed before ``cutoff`` (ms) whose race is not known to be started: their
        process may have died between the confirmation and the race's creation."""
        stored: Any = await self.redis.hgetall(keys.arena_keys(arena)["starting"])
        found = []
        for race, text in stored.items():
            entry = json.loads(text)
            if int(entry["at"]) < cutoff:
                found.append((race.decode(), str(entry["a"]), str(entry["b"])))
        return found

    @repeatable
    async def free_race(self, arena: str, race: str, now: int) -> int:
        """Free the players of a race that will not be played (its second seat was refused); how many were freed."""
        return await self._release(arena, [race], -1, now)

    async def _release(self, arena: str, races: list[str], cutoff: int, now: int) -> int:
        names = keys.arena_keys(arena)
        times = await self.times(arena)
        end_at = 0 if times is None else times[1]
        freed = await self.scripts.arena_release(
            keys=[names["claimed"], names["busy"], names["free"], names["paused"], names["starting"]],
            args=script_arguments(cutoff=cutoff, races=races, now=now, end_at=end_at),
        )
        return int(freed)

    @repeatable
    async def release_stale(self, arena: str, cutoff: int, now: int) -> int:
        """Free the players of pairs claimed before ``cutoff`` (ms) and never confirmed; how many were freed."""
        return await self._release(arena, [], cutoff, now)

    @repeatable
    async def games(self, arena: str, player: str) -> list[ArenaGame]:
        """A player's finished races in the arena, oldest first."""
        stored: Any = await self.redis.lrange(keys.arena_games(arena, player), 0, -1)
        if not stored and self.archive is not None and not await self.redis.exists(keys.arena_keys(arena)["players"]):
            return await self.archive.games(arena, player)
        return [_game(text) for text in stored]

    @repeatable
    async def ratings(self, arena: str) -> dict[str, float]:
        """Every player of the arena and its rating when it joined."""
        return {player: float(entry["rating"]) for player, entry in (await self._entries(arena)).items()}

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

    async def archive_finished(self, now: int, *, grace_ms: int, stale_ms: int) -> list[str]:
        """Move the arenas whose clock ran out :data:`grace_ms` before ``now`` to the archive once their last races
        are booked (or ``stale_ms`` after the end whatever is left under way: a process died with its race): each
        written once (another process may have written it), then its keys get the cache TTL and it leaves the index
        of arenas to archive. The arenas handled; none without an archive."""
        if self.archive is None:
            return []
        names: Any = await self.redis.zrangebyscore(keys.ARENAS_ENDING, "-inf", now - grace_ms, withscores=True)
        due = {name.decode(): int(end) for name, end in names}
        done = await self.archive.archived(list(due)) if due else set()
        handled = []
        for arena, end_at in due.items():
            if now < end_at + stale_ms and await self.busy(arena):
                continue
            stored: Any = await self.redis.hgetall(keys.arena_keys(arena)["meta"])
            entries = await self._entries(arena)
            players = list(entries)
            if arena not in done and stored:
                scores: Any = await self.redis.zmscore(keys.arena_keys(arena)["scores"], players) if players else []
                final = {player: (entries[player], int(points or 0)) for player, points in zip(players, scores, strict=True)}
                games = {player: await self.games(arena, player) for player in players}
                await self.archive.put_arena(arena, {name.decode(): value.decode() for name, value in stored.items()}, final, games)
            await self._keep_as_cache(arena, players)
            handled.append(arena)
        return handled

    async def _keep_as_cache(self, arena: str, players: list[str]) -> None:
        """An archived arena's keys get the cache TTL; it leaves the index of arenas to archive."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in [*keys.arena_keys(arena).values(), *(keys.arena_games(arena, player) for player in players)]:
                pipe.pexpire(key, self.cache_ttl_ms)
            pipe.zrem(keys.ARENAS_ENDING, arena)
            await pipe.execute()
