"""Arena tournaments: players join an arena, free players are paired round after round by score (shared/arena.py),
each pair's race is an ordinary race (:class:`ArenaRaces`), and each finished race is booked once with its points
(streaks, berserk) into the standings. Several processes may pair and book one arena at once: the claim and the
booking are atomic scripts (server/store/arena_store.py), so no player is in two races and no race counts twice.

Every process runs the rounds of the arenas its connections joined (:meth:`ArenaService.run`, one round a second):
it books the races that finished, pairs the free players, and tells its connections from the arena's feed (their
pairings, the standings, at most once a second). docs/COMMUNITY.md "Arena tournaments" says what is not there yet.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from server.services.background import BackgroundLoop
from server.services.dealer import Dealer
from server.services.errors import ServiceError
from server.services.race import RaceService, new_race_id
from server.store import ArenaCounts, ArenaMeta, ArenaStore, Identity, RaceRecord, StoreError
from shared.arena import ArenaGame, Schedule, Standing, choose_pairs, occurrence_id, parse_schedule, standings
from shared.protocol import (
    ARENA_FINISHED_LISTED,
    ARENA_TOP,
    ArenaInfo,
    ArenaLine,
    ArenaListReply,
    ArenaPaired,
    ArenaStandings,
    ArenaStatus,
    ErrorCode,
    Message,
    Outcome,
    RaceSettings,
    RaceStatus,
)

log = logging.getLogger(__name__)

Clock = Callable[[], Awaitable[int]]
StartRace = Callable[[str, str, str, str], Awaitable[None]]
"""Starts the race of a pair: (arena, race id, player a, player b)."""
Send = Callable[[Message], None]
"""Queues a message for one connection."""
Settle = Callable[[str, "ArenaService"], Awaitable[None]]
"""Books an arena's races that finished."""
Berserk = Callable[[str, str], Awaitable[int]]
"""A player goes berserk in a race before its start: (race id, player) -> its own deadline (ms)."""

@dataclass(frozen=True, slots=True)
class ArenaRules:
    """The operator's arena settings (server settings ``arena.*``, docs/OPERATIONS.md "Recurring arenas")."""

    recurring: tuple[str, ...] = ()
    """Recurring arenas, one spec each: ``name=Hourly 5-minute;every=60;minutes=55;time_limit=300`` (also
    ``rated``, ``max_players``, ``ahead``; shared/arena.py ``parse_schedule``). Added to those of ``flowergarden
    admin tournament add``."""


SCHEDULE_EVERY_MS = 10_000
"""How often a process opens the recurring arenas due (each is opened once, whichever process is first)."""

CLAIM_LEASE_MS = 10_000
"""How long a claimed pair waits for its process to confirm it (a confirmation follows the claim at once) before
another process frees its players: the claiming process was killed."""

OPPOSITE = {Outcome.WON: Outcome.LOST, Outcome.LOST: Outcome.WON, Outcome.DRAW: Outcome.DRAW}


@dataclass(frozen=True, slots=True)
class Side:
    """One player's side of a finished arena race."""

    player: str
    berserk: bool
    moves: int


class ArenaService:
    """Arenas: joining, pausing, pairing rounds, booking results, standings."""

    def __init__(
        self, store: ArenaStore, now_ms: Clock, start_race: StartRace, *, settle: Settle | None = None, go_berserk: Berserk | None = None,
        interval: float = 1.0,
    ) -> None:
        """``start_race`` starts each pair's race; ``settle`` books the arena's races that finished (both for
        :meth:`run`); ``go_berserk`` halves a player's time in a race (:meth:`berserk`); ``interval``: seconds between
        two rounds."""
        self.store = store
        self.now_ms = now_ms
        self.start_race = start_race
        self.settle = settle
        self.go_berserk = go_berserk
        self.schedules: tuple[Schedule, ...] = ()
        """The recurring arenas of the server's settings (``arena.recurring``); the operators' stored ones are added."""
        self._scheduled_at = 0
        self.interval = interval
        self._listeners: dict[str, dict[str, set[Send]]] = {}
        """Arena -> player -> the sends of this process's connections that joined it."""
        self._watchers: dict[str, set[Send]] = {}
        """Arena -> the sends of this process's connections that watch it (``arena_watch``)."""
        self._read: dict[str, str] = {}
        """Arena -> the last feed entry this process told its connections of."""
        self._loop = BackgroundLoop("arena rounds")

    async def create(
        self, name: str, start_at: int, duration_ms: int, time_limit: int = 300, *, rated: bool = False, private: bool = True,
        max_players: int | None = None,
    ) -> str:
        """A new arena from ``start_at`` for ``duration_ms`` whose races last ``time_limit`` seconds (``rated``: they
        change the ratings; ``private``: not listed; ``max_players``: a cap); its id."""
        arena = new_race_id()  # letters and digits: one word in a link
        await self.store.create(arena, ArenaMeta(name, start_at, start_at + duration_ms, time_limit, rated, private, max_players or 0))
        return arena

    async def info(self, arena: str) -> ArenaInfo:
        """The arena; ServiceError ``unknown_arena`` if there is none."""
        meta = await self.store.meta(arena)
        if meta is None:
            raise ServiceError(ErrorCode.UNKNOWN_ARENA, f"there is no arena {arena[:16]!r}", field="arena")
        return arena_info(arena, meta, await self.store.counts(arena), await self.now_ms())

    async def listed(self) -> ArenaListReply:
        """The listed arenas by status (reply id 0: the handler sets its own)."""
        now = await self.now_ms()
        current, past = await self.store.listed(now, ARENA_FINISHED_LISTED)
        infos = [arena_info(arena, meta, await self.store.counts(arena), now) for arena, meta in current]
        upcoming = sorted((info for info in infos if info.status is ArenaStatus.UPCOMING), key=lambda info: info.start_at)
        running = [info for info in infos if info.status is ArenaStatus.RUNNING]
        finished = [arena_info(arena, meta, await self.store.counts(arena), now) for arena, meta in past]
        return ArenaListReply(id=0, upcoming=upcoming, running=running, finished=finished)

    async def join(self, arena: str, who: Identity, rating: float) -> None:
        """Join (or come back from a pause): paired from the next round on; ``unknown_arena`` for no such arena,
        ``arena_over`` once its clock ran out, ``arena_full`` when it has its maximum of players."""
        meta = await self._open(arena)
        if not await self.store.join(arena, who, rating, await self.now_ms(), meta.max_players):
            raise ServiceError(ErrorCode.ARENA_FULL, f"this arena has its {meta.max_players} players", field="arena", expected=meta.max_players)

    async def pause(self, arena: str, player: str) -> None:
        """Stop being paired (a race under way still counts); ``join`` again to come back."""
        await self.store.pause(arena, player)

    async def pair_round(self, arena: str) -> list[tuple[str, str, str]]:
        """Pair the free players now and start their races; the (race id, a, b) started by this call."""
        times = await self.store.times(arena)
        now = await self.now_ms()
        if times is None or not times[0] <= now < times[1]:
            return []
        pairs = [(a, b, new_race_id()) for a, b in choose_pairs(await self.store.free_players(arena))]
        claimed = set(await self.store.claim(arena, pairs, now))
        started = []
        for a, b, race in pairs:
            if race in claimed and await self.store.confirm(arena, race, a, b, now):  # not released meanwhile (a slow process)
                await self.start_race(arena, race, a, b)
                await self.store.started(arena, race)
                started.append((race, a, b))
        return started

    async def berserk(self, arena: str, race: str, player: str) -> int:
        """``player`` goes berserk in ``race``, its arena race under way, before the start: its own deadline (ms);
        ServiceError ``not_seated`` if that is not its race of this arena, ``berserk_too_late`` after the countdown."""
        await self.info(arena)
        if (await self.store.busy(arena)).get(player) != race or self.go_berserk is None:
            raise ServiceError(ErrorCode.NOT_SEATED, "that is not your race under way in this arena", field="race")
        return await self.go_berserk(race, player)

    async def release_stale(self, arena: str) -> int:
        """Free the players of pairs claimed more than :data:`CLAIM_LEASE_MS` ago and never confirmed (the claiming
        process died before it created their race), and start the races of pairs confirmed that long ago whose
        process never said it started them (it died between the confirmation and the race's creation: starting a race
        is idempotent, so a slow process and this one start it once); how many players were freed."""
        now = await self.now_ms()
        for race, a, b in await self.store.stale_starting(arena, now - CLAIM_LEASE_MS):
            log.warning("arena %s: starting race %s of %s and %s, confirmed by a process that did not start it", arena, race, a, b)
            await self.start_race(arena, race, a, b)
            await self.store.started(arena, race)
        return await self.store.release_stale(arena, now - CLAIM_LEASE_MS, now)

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

    async def lines(self, arena: str) -> list[ArenaLine]:
        """The standings as the protocol shows them (by handle)."""
        return list((await self.table(arena)).values())

    async def table(self, arena: str) -> dict[str, ArenaLine]:
        """Player id -> its line of the standings as the protocol shows it, best first."""
        who = await self.store.identities(arena)
        return {
            line.player: ArenaLine(rank=line.rank, handle=who[line.player].account or who[line.player].name, score=line.score,
                                   performance=round(line.performance), fire=line.fire, games=line.games, berserks=line.berserks)
            for line in await self.standings(arena) if line.player in who
        }  # fmt: skip

    # --- this process's connections and rounds ------------------------------------------------------

    def listen(self, arena: str, player: str, send: Send) -> None:
        """Tell ``send`` (a connection of ``player``) its pairings in ``arena`` and the standings."""
        self._listeners.setdefault(arena, {}).setdefault(player, set()).add(send)

    def watch(self, arena: str, send: Send) -> None:
        """Tell ``send`` (a spectator's connection) the top of ``arena``'s standings from now on."""
        self._watchers.setdefault(arena, set()).add(send)

    def unwatch(self, arena: str, send: Send) -> None:
        """Stop telling ``send`` of ``arena``."""
        sends = self._watchers.get(arena, set())
        sends.discard(send)
        if not sends:
            self._watchers.pop(arena, None)

    def forget(self, arena: str, player: str, send: Send) -> bool:
        """Stop telling ``send``; True if ``player`` has no other connection listening to ``arena`` here."""
        players = self._listeners.get(arena, {})
        sends = players.get(player, set())
        sends.discard(send)
        if not sends:
            players.pop(player, None)
        if not players:
            self._listeners.pop(arena, None)
        return not sends

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._loop.stop()

    async def run(self) -> None:
        """A round a second for every arena this process's connections joined, until stopped."""

        async def step() -> None:
            await self.rounds()
            await asyncio.sleep(self.interval)

        await self._loop.run(step, retry_seconds=self.interval, expected=(StoreError, ServiceError))

    async def open_scheduled(self) -> list[str]:
        """Open the recurring arenas that should exist now (the one pairing and those to start within their
        schedule's ``ahead``), listed, with ids derived from schedule and start so each is opened once; the ids
        this call opened."""
        now = await self.now_ms()
        stored = []
        for name, spec in (await self.store.schedules()).items():
            try:
                stored.append(parse_schedule(spec))
            except ValueError as error:
                log.warning("recurring arena %r has a bad spec (%s); skipped", name, error)
        opened = []
        for schedule in {schedule.name: schedule for schedule in (*self.schedules, *stored)}.values():
            for start_at in schedule.starts(now):
                arena = occurrence_id(schedule.name, start_at)
                meta = ArenaMeta(schedule.name, start_at, start_at + schedule.minutes * 60_000, schedule.time_limit, schedule.rated, False,
                                 schedule.max_players, schedule.name)  # fmt: skip
                if await self.store.create(arena, meta):
                    opened.append(arena)
        return opened

    async def rounds(self) -> None:
        """Open the recurring arenas due (every :data:`SCHEDULE_EVERY_MS`), then one round for every arena this
        process's connections joined or watch."""
        now = await self.now_ms()
        if now - self._scheduled_at >= SCHEDULE_EVERY_MS:
            self._scheduled_at = now
            await self.open_scheduled()
        for arena in list(dict.fromkeys([*self._listeners, *self._watchers])):
            await self.round(arena)

    async def round(self, arena: str) -> None:
        """Book what finished, pair who is free, and tell this process's connections what the feed says."""
        if self.settle is not None:
            await self.settle(arena, self)
        await self.release_stale(arena)
        await self.pair_round(arena)
        notes = await self.store.notes_after(arena, self._read.get(arena, "0-0"))
        if not notes:
            return
        self._read[arena] = notes[-1][0]
        listeners = self._listeners.get(arena, {})
        for _, note in notes:
            if note.get("kind") == "paired":
                for slot, player in enumerate((note["a"], note["b"])):
                    for send in listeners.get(player, ()):
                        send(ArenaPaired(arena=arena, race=note["race"], slot=slot))
        await self._push_standings(arena, listeners)

    async def _push_standings(self, arena: str, listeners: dict[str, set[Send]]) -> None:
        """The top of the table to every joined and watching connection here, with each player's own line."""
        table = await self.table(arena)
        info = await self.info(arena)
        top = list(table.values())[:ARENA_TOP]

        def standings(own: ArenaLine | None) -> ArenaStandings:
            return ArenaStandings(arena=arena, standings=top, own=own, players=len(table), status=info.status, races=info.races)

        for player, sends in listeners.items():
            message = standings(table.get(player))
            for send in sends:
                send(message)
        watching = standings(None)
        joined = {send for sends in listeners.values() for send in sends}
        for send in self._watchers.get(arena, set()) - joined:  # a player's connection that also watches: its own line only
            send(watching)

    async def _open(self, arena: str) -> ArenaMeta:
        meta = await self.store.meta(arena)
        if meta is None:
            raise ServiceError(ErrorCode.UNKNOWN_ARENA, f"there is no arena {arena[:16]!r}", field="arena")
        if await self.now_ms() >= meta.end_at:
            raise ServiceError(ErrorCode.ARENA_OVER, "this arena's clock has run out: no new race is paired", field="arena")
        return meta


def arena_info(arena: str, meta: ArenaMeta, counts: ArenaCounts, now: int) -> ArenaInfo:
    """An arena as the protocol shows it, its status at ``now``."""
    status = ArenaStatus.UPCOMING if now < meta.start_at else ArenaStatus.RUNNING if now < meta.end_at else ArenaStatus.FINISHED
    return ArenaInfo(
        arena=arena, name=meta.name, start_at=meta.start_at, end_at=meta.end_at, time_limit=meta.time_limit, status=status, rated=meta.rated,
        private=meta.private, max_players=meta.max_players or None, players=counts.players, races=counts.races, schedule=meta.schedule or None,
    )


class ArenaRaces:
    """Each pair's race, an ordinary race (not listed in the lobby, anyone may watch), and the booking of those that
    finished."""

    def __init__(self, store: ArenaStore, races: RaceService, dealer: Dealer) -> None:
        self.store = store
        self.races = races
        self.dealer = dealer

    async def start(self, arena: str, race: str, a: str, b: str) -> None:
        """Seat ``a`` and ``b`` in race ``race`` (its countdown starts) and note the pairing in the arena's feed.
        Idempotent (a process taking over a dead one's pair, or two at once, start it once): a race already created is
        not dealt again, a second seat already taken not joined again. A second seat refused (a rated arena's ladder
        rules: ``rated_pair_limit``...) discards the race and frees both players."""
        meta = await self.store.meta(arena)
        who = await self.store.identities(arena)
        assert meta is not None
        record = await self._record(race)
        if record is None:
            new = await self.dealer.deal(RaceSettings(time_limit=meta.time_limit, rated=meta.rated, arena=arena), origin="arena")
            try:
                await self.races.create(race, who[a], new)
            except ServiceError:
                if await self._record(race) is None:  # not another process's creation of it
                    raise
            record = await self._record(race)
        if record is not None and record.status is RaceStatus.WAITING:
            try:
                await self.races.join(race, who[b])
            except ServiceError as error:
                if error.code not in (ErrorCode.ALREADY_SEATED, ErrorCode.RACE_FULL):
                    log.info("arena %s: race %s not played (%s); its players are free again", arena, race, error.code)
                    await self.races.discard(race)
                    await self.store.free_race(arena, race, await self.races.now_ms())
                    return
        await self.store.note(arena, kind="paired", race=race, a=a, b=b)

    async def _record(self, race: str) -> RaceRecord | None:
        try:
            return await self.races.record(race)
        except ServiceError:
            return None

    async def berserk(self, race: str, player: str) -> int:
        """``player`` goes berserk in ``race`` (the race's script checks the seat and the countdown)."""
        return await self.races.berserk(race, player)

    async def settle(self, arena: str, service: ArenaService) -> None:
        """Book every race of the arena that has finished (once, whichever processes try)."""
        for race in set((await self.store.busy(arena)).values()):
            try:
                record = await self.races.record(race)
            except ServiceError:
                continue  # not created (yet): its pairing process is creating it
            if record.status is not RaceStatus.FINISHED or len(record.seats) < 2:
                continue
            first, second = record.seats[0], record.seats[1]
            outcome = Outcome.DRAW if record.winner is None else Outcome.WON if record.winner == 0 else Outcome.LOST
            if await service.finished(arena, race, Side(first.player, first.berserk, first.moves), Side(second.player, second.berserk, second.moves), outcome):
                await self.store.note(arena, kind="result", race=race)
