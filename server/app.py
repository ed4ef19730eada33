"""Wiring: one server process = Redis clients + stores + services + event hub + timer sweeper + transport."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import resource
import secrets
import signal
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

import asyncpg
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError

from server import logs, metrics
from server.admin import AdminExecutor
from server.bot_host import MAX_SUMMONED_BOTS, BotHost
from server.dispatch import Dispatcher, LobbyServices, PlayerServices
from server.logs import LogFormat
from server.operations import Operations
from server.peers import PeerResolver
from server.ratelimit import AddressBuckets
from server.record_signing import RecordSigner
from server.services import race_journal
from server.services.accounts import AccountService, LoginLimits
from server.services.analysis import AnalysisBudget, RaceAnalyst, SolveFromLimits
from server.services.archiver import Archiver
from server.services.arena import ArenaRaces, ArenaRules, ArenaService
from server.services.arena_record import ArenaRecords
from server.services.clock import ServerClock
from server.services.daily import Clock as DailyClock
from server.services.daily import DailyRules, DailyService
from server.services.dealer import Dealer
from server.services.event_hub import EventHub
from server.services.ghost import GhostService
from server.services.lobby import LobbyLimits, LobbyService
from server.services.lobby_feed import LobbyFeed
from server.services.online import STALE_MS, OnlineCounter
from server.services.player_views import PlayerViews
from server.services.policy import DEFAULT_MIN_SPECTATOR_DELAY_MS, DEFAULT_RATED_MIN_SPECTATOR_DELAY_MS, RacePolicy
from server.services.presence import PresenceService
from server.services.quick_match import QuickMatchService, RatingWindow
from server.services.race import RaceService
from server.services.ratings import LadderRules, PlayerBooks, RatingPolicy
from server.services.rematch import RematchService
from server.services.seed_pool import SeedPool
from server.services.sessions import SessionLimits, SessionService
from server.services.spectate import SpectateService
from server.services.timers import TimerSweeper
from server.store import (
    UNDECODABLE_EVENTS,
    AnalysisStore,
    AnyRaceChannels,
    ArenaStore,
    DailyStore,
    DirectRaceChannels,
    LobbyFeedReader,
    LobbyStore,
    OnlineStore,
    OpsStore,
    PlayerRecords,
    PlayerStore,
    QuickMatchStore,
    RaceChannels,
    RaceStore,
    RedisSessionStore,
    SeedPoolStore,
    ShardedRaceChannels,
    commands_waiting,
    connect_redis,
    database,
    sharded_channels_supported,
)
from server.store.archive_queue import ArchiveQueue
from server.store.arena_records_sql import PostgresArenaArchive
from server.store.connection import RedisClient, connect_cluster
from server.store.daily_records_sql import PostgresDailyArchive
from server.store.database import PostgresRaceArchive
from server.store.durability import Durability, check_layout, check_store
from server.store.player_records_sql import PostgresPlayerRecords
from server.store.redis_import import import_pending
from server.store.script_pipeline import DirectAddress
from server.transport import Transport, TransportLimits
from shared import DeadCheck
from shared.arena import parse_schedule
from shared.glicko2 import DEFAULT_RATING
from shared.solver import Budget, dead_check

log = logging.getLogger(__name__)

DAY_SECONDS = 24 * 3600
OVERLOAD_SCRIPT_LAG_SECONDS = 0.5
"""How long the oldest race script (moves, timers, presence) may wait unanswered on the store's pipelined connection
before the process counts as overloaded and refuses new races and spectators (``overloaded``): the races under way
are then acknowledged half a second late or worse."""

BLOCKING_POOL_SIZE = 4
"""Connections for blocking reads: the lobby feed's XREAD uses one, and the event hub's pub/sub connection one where
it goes through redis-py (on one Redis over TCP or a unix socket it has a connection of its own: server/store/direct_channels.py);
never shared with commands, so a burst of requests cannot starve event delivery (nor the reverse)."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything an operator can set (``flowergarden serve --help`` lists the flags)."""

    redis_url: str
    """The Redis to use (empty: an embedded one, unless ``redis_cluster_url`` is given)."""
    redis_cluster_url: str = ""
    """A Redis Cluster to use instead: the comma-separated URLs of some of its nodes (any reachable one is enough)."""
    durability: Durability = Durability.PRIMARY
    """When a race's change is acknowledged: the primary ran it, a replica has it, or it is on disk (fsync)."""
    durability_timeout_seconds: float = 1.0
    """How long a change waits for a replica (durability ``replica``) before the client is told ``unavailable``."""
    durability_degraded: bool = False
    """At durability ``replica``: while a race's primary has no replica attached (after a failover, until the old node
    rejoins), acknowledge its changes at ``primary`` (counted in ``flowergarden_degraded_acks_total``, logged when
    it starts and ends) instead of answering ``unavailable``; the server also starts with a primary lacking one."""
    host: str = "127.0.0.1"
    port: int = 8765
    countdown_seconds: float = 3.0
    limits: TransportLimits = field(default_factory=TransportLimits)
    live_ttl_seconds: int = DAY_SECONDS
    """How long an unfinished race is kept after its last change."""
    record_ttl_seconds: int = 7 * DAY_SECONDS
    """How long a finished race's record is kept."""
    session_ttl_seconds: int = 7 * DAY_SECONDS
    """How long a session that took a seat is kept after its last ``hello``."""
    session_max_age_seconds: int = 30 * DAY_SECONDS
    """A session's absolute lifetime from its creation (or the login that gave it its token): no ``hello`` renews it
    past this; then the player logs in again."""
    sessions: SessionLimits = field(default_factory=SessionLimits)
    timer_interval: float = 0.1
    dead_check_seconds: float = 0.05
    """Budget of the solver's dead-position proof after each move (0 turns the check off)."""
    dead_check_nodes: int = 20_000
    max_actions: int = 1000
    """Actions (moves, undos, redeals) one player may make in one race."""
    redis_pool_size: int = 64
    """Connections for commands (scripts, reads) per process; a request waits for a free one as long as it takes
    (each holder is bounded by the socket timeout) rather than failing: pool exhaustion is back-pressure, a late
    answer, never ``unavailable`` while Redis answers."""
    spectator_delay_seconds: float = DEFAULT_MIN_SPECTATOR_DELAY_MS / 1000
    """Spectator delay of races that do not choose one (fair play)."""
    min_spectator_delay_seconds: float = DEFAULT_MIN_SPECTATOR_DELAY_MS / 1000
    """No public race's spectators get events sooner than this (docs/FAIRPLAY.md); private races may accept less."""
    rated_min_spectator_delay_seconds: float = DEFAULT_RATED_MIN_SPECTATOR_DELAY_MS / 1000
    """The least delay of a rated race."""
    grace_seconds: float = 30.0
    """How long a disconnected player keeps its seat (races may choose their own)."""
    rematch_window_seconds: float = 60.0
    """How long a rematch offer stands before it lapses."""
    presence_lease_seconds: float = 15.0
    """Presence leases are renewed every third of this; a dead process's connections count as gone after it."""

    def race_policy(self) -> RacePolicy:
        """The race defaults in milliseconds."""
        return RacePolicy(
            spectator_delay_ms=round(self.spectator_delay_seconds * 1000),
            min_spectator_delay_ms=round(self.min_spectator_delay_seconds * 1000),
            rated_min_spectator_delay_ms=round(self.rated_min_spectator_delay_seconds * 1000),
            grace_ms=round(self.grace_seconds * 1000),
            rematch_window_ms=round(self.rematch_window_seconds * 1000),
        )
    seed_pool_target: int = 20
    """Proven seeds kept ready per offered profile for ``solvable_only`` races (0: never fill)."""
    seed_pool_seconds: float = 1.0
    """Solver budget per candidate seed; most classic deals (about 4 in 5 measured) are proven winnable within a second."""
    seed_pool_workers: int = 1
    """Worker processes that prove seeds (each one is busy only while the pool is below its target)."""
    solvable_profiles: tuple[str, ...] = ("classic",)
    """Profiles offered as ``solvable_only`` (foundation-only deals are almost never winnable)."""
    lobby_max_listed: int = 500
    """Open public races the lobby lists at most; more get ``lobby_full``."""
    lobby: LobbyLimits = field(default_factory=LobbyLimits)
    trusted_proxies: tuple[str, ...] = ()
    """Addresses or networks of reverse proxies whose ``X-Forwarded-For`` names the client (e.g. ``10.0.0.0/8``)."""
    operator_secret: str | None = None
    """Signs ``flowergarden admin`` commands; without one this process obeys none (docs/OPERATIONS.md)."""
    admin_drain_timeout_seconds: float = 3600.0
    """How long a drain waits for the races under way to finish before the process stops anyway."""
    sigterm_drain_seconds: float = 25.0
    """On SIGTERM the process drains (as ``flowergarden admin drain``) for at most this long, then hands the
    remaining clients off (``server_shutdown``); 0: hand off at once. Under an orchestrator's stop timeout
    (Kubernetes' 30 s default; the compose files set theirs above their own drain)."""
    certfile: str | None = None
    """PEM certificate (chain) for ``wss://``; with ``keyfile``. None: plain ``ws://`` (TLS at a proxy)."""
    keyfile: str | None = None
    log_format: LogFormat = LogFormat.TEXT
    log_level: str = "INFO"
    record_key_file: str = ""
    """A file holding the Ed25519 key exported race records are signed with (made there at the first start, mode
    0600); empty: the key is kept in the store, made by the first process (docs/FAIRPLAY.md "What verify proves")."""
    data_dir: str = "var/redis"
    """Folder of the embedded Redis' append-only file (``flowergarden serve`` without a Redis URL)."""
    rated_record_ttl_seconds: int = 0
    """How long a finished rated race's record is kept (0: forever) while it is not archived (no database)."""
    database_url: str = ""
    """The PostgreSQL that archives finished races (empty: none; ``flowergarden serve`` starts an embedded one)."""
    postgres_data_dir: str = ""
    """Folder of the embedded PostgreSQL (``flowergarden serve`` without a database URL); empty: ``postgres`` beside
    ``data_dir`` (``var/postgres`` by default)."""
    migrate: bool = False
    """Apply the database's missing schema migrations at start (else a schema behind the code refuses the start)."""
    archive_cache_seconds: int = DAY_SECONDS
    """How long a finished race stays in Redis once it is archived (a shorter retention of its own is kept); reads
    of an older one (replay) come from PostgreSQL."""
    provisional_deviation: float = 110.0
    """A rating whose deviation is above this is provisional (left off the leaderboard)."""
    login: LoginLimits = field(default_factory=LoginLimits)
    ladder: LadderRules = field(default_factory=LadderRules)
    """What keeps rated races from being farmed: the abort rule, the address and pair rules, the leaderboard's entry."""
    rating_window: RatingWindow = field(default_factory=RatingWindow)
    """How far apart rated quick-match partners may be, widening with the wait."""
    quick_match_retry_seconds: float = 1.0
    """How often waiting rated quick-match entries are tried again (as their windows widen)."""
    max_summoned_bots: int = MAX_SUMMONED_BOTS
    """Practice bots this process plays at once on request (``summon_bot``; 0: never)."""
    bot_pace: float = 1.0
    """Scales the summoned bots' waits between moves (0: no wait, for tests and demos)."""
    analysis: bool = True
    """Analyse finished races in a background worker process (``flowergarden serve --no-analysis``: leave it to
    other processes sharing the Redis)."""
    analysis_budget: AnalysisBudget = field(default_factory=AnalysisBudget)
    """What one race's post-race analysis may spend (docs/FAIRPLAY.md)."""
    daily: DailyRules = field(default_factory=DailyRules)
    """The daily deal: the seed pool tier it is drawn from, its profile and an attempt's time limit (docs/COMMUNITY.md)."""
    solve_from: SolveFromLimits = field(default_factory=SolveFromLimits)
    """What ``solve_from`` (a winning line from any point of a finished race) may spend, and how often (docs/FAIRPLAY.md)."""
    arena: ArenaRules = field(default_factory=ArenaRules)
    """Arena tournaments: the operator's recurring arenas (docs/OPERATIONS.md "Recurring arenas")."""

    @property
    def embedded_database_dir(self) -> str:
        """The embedded PostgreSQL's folder: ``postgres_data_dir``, else ``postgres`` beside ``data_dir``."""
        return self.postgres_data_dir or str(Path(self.data_dir).parent / "postgres")

    def rating_policy(self) -> RatingPolicy:
        """How ratings and rated records behave."""
        return RatingPolicy(
            provisional_deviation=self.provisional_deviation,
            record_ttl_ms=self.rated_record_ttl_seconds * 1000,
            claim_ttl_ms=self.live_ttl_seconds * 1000,
            ladder=self.ladder,
        )


class TlsSetupError(Exception):
    """The certificate or key cannot be read or do not belong together."""


def _log_crash(task: asyncio.Task[None]) -> None:
    """A background worker that ended with an exception stops its work in this process: say so, with the cause
    (``flowergarden_background_worker_up`` shows 0 from then on)."""
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("background worker %s crashed; its work stops in this process until it restarts", task.get_name(), exc_info=error)


def _alive(task: asyncio.Task[None]) -> bool:
    """Whether a background task runs, or ended because it had nothing to do (not cancelled, no exception)."""
    return not task.done() or (not task.cancelled() and task.exception() is None)


def make_dead_check(config: ServerConfig) -> DeadCheck | None:
    """The solver's proof of dead positions within the configured budget, or None when turned off."""
    if config.dead_check_seconds <= 0:
        return None
    return dead_check(Budget(seconds=config.dead_check_seconds, nodes=config.dead_check_nodes))


class BackgroundService(Protocol):
    """A loop the server runs for its lifetime."""

    async def run(self) -> None: ...

    def stop(self) -> None: ...


def raise_open_files_limit() -> int:
    """Raise this process's soft descriptor limit to its hard limit (each connection and each half-sent handshake holds
    one; distributions default the soft one to 1,024); the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class RaceServer:
    """A running server; ``async with RaceServer(config) as server`` starts and stops it."""

    def __init__(self, config: ServerConfig, *, dead_check: DeadCheck | None = None, daily_clock: DailyClock | None = None) -> None:
        """``dead_check`` replaces the solver's proof of dead positions (for tools and tests); ``daily_clock`` the
        clock of the daily deal's days and attempts (for tests of a day's end; default: Redis' clock)."""
        self.config = config
        self.daily_clock = daily_clock
        self.daily: DailyService | None = None
        self.arenas: ArenaService | None = None
        self.dead_check = dead_check or make_dead_check(config)
        self.redis: RedisClient | None = None
        self.reader_redis: RedisClient | None = None
        self.races: RaceService | None = None
        self.books: PlayerBooks | None = None
        self.presence: PresenceService | None = None
        self.lobby: LobbyService | None = None
        self.lobby_feed: LobbyFeed | None = None
        self.seed_pool: SeedPool | None = None
        self.analyst: RaceAnalyst | None = None
        self.transport: Transport | None = None
        self.bots: BotHost | None = None
        self.background: tuple[BackgroundService, ...] = ()
        """The background services, each run as one task (each survives any failure of one of its rounds)."""
        self._tasks: list[asyncio.Task[None]] = []
        self._stoppers: list[Callable[[], None]] = []
        self.hub: EventHub | None = None
        self.operations: Operations | None = None
        self.admin: AdminExecutor | None = None
        self._forget_metrics: Callable[[], None] | None = None
        self.database: asyncpg.Pool | None = None
        self.archiver: Archiver | None = None
        self.port = config.port

    async def _player_records(self, player_store: PlayerStore) -> PlayerRecords:
        """The players' lasting records: PostgreSQL's when there is one, else Redis's (docs/STORAGE.md "Player
        records"); a warning while Redis still holds records never imported."""
        if self.database is None:
            return player_store
        assert self.redis is not None
        if await import_pending(self.redis, self.database):
            logs.warning("redis_records_not_imported", command="flowergarden db import-redis")
        return PostgresPlayerRecords(self.database)

    def _race_channels(self, sharded: bool) -> AnyRaceChannels:
        """How race events reach this process: sharded channels on a Cluster of Redis >= 7, a direct connection to a
        single Redis where one can be made, else plain channels through the reader pool."""
        assert self.reader_redis is not None
        if sharded and isinstance(self.reader_redis, RedisCluster):
            return ShardedRaceChannels(self.reader_redis)
        direct = DirectAddress.of(self.reader_redis)
        return RaceChannels(self.reader_redis) if direct is None else DirectRaceChannels(direct)

    def _archiver(self, archive: PostgresRaceArchive | None, process_id: str, operations: Operations) -> Archiver | None:
        """The archiver of finished races into PostgreSQL when there is an archive (its lag shown by /ready)."""
        if archive is None:
            return None
        assert self.redis is not None
        archiver = Archiver(ArchiveQueue(self.redis, process_id, cache_ttl_ms=self.config.archive_cache_seconds * 1000), archive)
        operations.archive_lag = lambda: archiver.lag
        return archiver

    async def start(self) -> None:
        """Connect to Redis, start the background tasks and listen."""
        config = self.config
        metrics.open_files_limit(raise_open_files_limit())
        tls = self._tls()  # a certificate that cannot be used fails the start before anything else
        self.redis = self._connect(max_connections=config.redis_pool_size, socket_timeout=5.0)
        # Blocking reads (race channels, lobby feed) have their own pool; XREAD BLOCK stays below this socket timeout.
        self.reader_redis = self._connect(max_connections=BLOCKING_POOL_SIZE, socket_timeout=10.0)
        await check_store(self.redis, config.durability, degraded_ok=config.durability_degraded)
        await check_layout(self.redis)  # a store a newer release wrote is refused
        await self.redis.ping()
        # On a Cluster of Redis >= 7 each race's channel is sharded (published in its slot, subscribed on its node).
        sharded = await sharded_channels_supported(self.redis)
        store = RaceStore(
            self.redis,
            live_ttl_ms=config.live_ttl_seconds * 1000,
            record_ttl_ms=config.record_ttl_seconds * 1000,
            max_actions=config.max_actions,
            durability=config.durability,
            wait_timeout_ms=round(config.durability_timeout_seconds * 1000),
            degraded_ok=config.durability_degraded,
            sharded_channels=sharded,
        )
        store.lifecycle = race_journal.lifecycle
        archive = await self._open_archive()
        store.archive = archive
        player_store = PlayerStore(self.redis)
        records = await self._player_records(player_store)
        rating_policy = config.rating_policy()
        self.books = books = PlayerBooks(player_store, store, rating_policy, records=records)
        self.races = RaceService(
            store,
            countdown_ms=round(config.countdown_seconds * 1000),
            dead_check=self.dead_check,
            policy=config.race_policy(),
            books=books,
        )
        session_store = RedisSessionStore(
            self.redis,
            ttl_ms=config.session_ttl_seconds * 1000,
            provisional_ttl_ms=round(config.sessions.provisional_seconds * 1000),
            max_age_ms=config.session_max_age_seconds * 1000,
        )
        sessions = SessionService(session_store, config.sessions)
        process_id = secrets.token_hex(8)
        clock = ServerClock(store)
        await clock.calibrate()
        hub = EventHub(store, self._race_channels(sharded), clock)
        self.presence = PresenceService(store, clock, process_id=process_id, lease_ms=round(config.presence_lease_seconds * 1000))
        self.seed_pool = SeedPool(
            SeedPoolStore(self.redis),
            profiles=config.solvable_profiles,
            target=config.seed_pool_target,
            budget_seconds=config.seed_pool_seconds,
            workers=config.seed_pool_workers,
        )
        dealer = Dealer(self.seed_pool)
        lobby_store = LobbyStore(self.redis, max_listed=config.lobby_max_listed)
        queue_store = QuickMatchStore(self.redis, stale_ms=round(config.lobby.stale_seconds * 1000))
        self.lobby = LobbyService(
            self.races, lobby_store, queue_store, dealer, config.lobby, invite_ttl_ms=config.live_ttl_seconds * 1000
        )
        feed = self.lobby_feed = LobbyFeed(lobby_store, LobbyFeedReader(self.reader_redis), block_ms=1000)
        await feed.start()
        player_views = PlayerViews(records, store, rating_policy, settle=books.book_once)

        async def rating_of(profile: str, player: str) -> float:
            rating = await player_views.rating(profile, player)
            return DEFAULT_RATING if rating is None else float(rating.rating)

        quick_match = QuickMatchService(
            self.races,
            self.lobby,
            queue_store,
            dealer,
            rating_of=rating_of,
            window=config.rating_window,
            retry_seconds=config.quick_match_retry_seconds,
        )
        lobby = LobbyServices(
            lobby=self.lobby,
            feed=feed,
            quick_match=quick_match,
            rematch=RematchService(self.races, dealer),
        )
        races, lobby_service = self.races, self.lobby

        async def after_ticks(race_ids: list[str]) -> None:
            await lobby_service.races_ticked(race_ids)
            await races.races_ticked(race_ids)

        sweeper = TimerSweeper(store, interval=config.timer_interval, after_ticks=after_ticks)
        ops_store = OpsStore(self.redis)
        redis, pool_size = self.redis, config.redis_pool_size
        operations = self.operations = Operations(
            ops_store, store, self._healthy,
            overloaded=lambda: commands_waiting(redis) >= pool_size or store.script_lag() >= OVERLOAD_SCRIPT_LAG_SECONDS,
        )
        operations.readers_failing = lambda: [name for name, reading in (("lobby_feed", feed.reading), ("race_channels", hub.reading)) if not reading]
        signer = operations.signer = (
            RecordSigner.of_file(Path(config.record_key_file)) if config.record_key_file else await RecordSigner.of_store(ops_store)
        )
        self.archiver = self._archiver(archive, process_id, operations)
        self.admin = AdminExecutor(
            ops_store, store, operations, self.lobby, self.seed_pool, process_id=process_id, secret=config.operator_secret,
            now_ms=store.now_ms,
        )
        self.admin.drain_timeout = config.admin_drain_timeout_seconds
        self.analyst = RaceAnalyst(
            AnalysisStore(self.redis, record_ttl_ms=config.record_ttl_seconds * 1000),
            store,
            budget=config.analysis_budget,
            solve_limits=config.solve_from,
            enabled=config.analysis,
        )
        self.admin.analysis_backlog = self.analyst.backlog
        arena_store = ArenaStore(
            self.redis, archive=None if self.database is None else PostgresArenaArchive(self.database), cache_ttl_ms=config.archive_cache_seconds * 1000
        )
        if self.archiver is not None:  # finished arenas go to the database with the finished races
            self.archiver.arenas, self.archiver.now_ms = arena_store, store.now_ms
        arena_races = ArenaRaces(arena_store, self.races, dealer)
        self.arenas = ArenaService(arena_store, store.now_ms, arena_races.start, settle=arena_races.settle, go_berserk=arena_races.berserk)
        self.arenas.schedules = tuple(parse_schedule(spec) for spec in config.arena.recurring)  # checked by server/config.py
        self.admin.arena_store = arena_store
        daily_store = DailyStore(
            self.redis, practice_ttl_ms=DAY_SECONDS * 1000, archive=None if self.database is None else PostgresDailyArchive(self.database),
            cache_ttl_ms=config.archive_cache_seconds * 1000,
        )  # fmt: skip
        self.daily = DailyService(daily_store, self.seed_pool, config.daily, now_ms=self.daily_clock, dead_check=self.dead_check)
        self.online = OnlineCounter(OnlineStore(self.redis, STALE_MS), process_id)
        background = self.background = (
            self.online, hub, sweeper, self.presence, feed, self.lobby, self.seed_pool, self.admin, books, quick_match, self.analyst, self.daily, self.arenas,
            *([self.archiver] if self.archiver is not None else []),
        )  # fmt: skip
        self._stoppers = [service.stop for service in background]
        self.hub = hub
        self._tasks = [asyncio.create_task(service.run(), name=type(service).__name__) for service in background]
        for task in self._tasks:
            task.add_done_callback(_log_crash)
        dispatcher = Dispatcher(
            sessions,
            self.races,
            hub,
            presence=self.presence,
            spectate=SpectateService(store, self.races, sign=signer.sign),
            clock=clock,
            lobby=lobby,
            door=operations,
            players=PlayerServices(
                accounts=AccountService(player_store, sessions, config.login, races=self.races, records=records), views=player_views,
                books=books,
            ),
            bots=BotHost(lambda: self.loopback_url, max_bots=config.max_summoned_bots, pace=config.bot_pace, tls=own_certificate(config.certfile)),
            analyst=self.analyst,
            daily=self.daily,
            ghosts=GhostService(self.races, store, self.lobby, self.daily),
            arenas=self.arenas,
            arena_records=ArenaRecords(self.arenas, arena_store, sign=signer.sign),
            address_watches=AddressBuckets(config.limits.watches_per_address_per_second, config.limits.watches_per_address_burst),
            online=self.online,
        )
        self.bots = dispatcher.bots
        self.transport = Transport(
            dispatcher, config.limits, self._healthy, gate=operations.gate, peers=PeerResolver(config.trusted_proxies)
        )
        operations.transport = self.admin.transport = self.transport
        self.online.local = self.transport.player_counts
        server = await self.transport.start(config.host, config.port, ssl=tls)
        self.port = next(iter(server.sockets)).getsockname()[1]
        self.admin.address = f"{config.host}:{self.port}"
        operations.accepting = True
        metrics.count_from(
            "flowergarden_undecodable_events", "Stored race events that did not decode (each logged, delivered to nobody).",
            lambda: UNDECODABLE_EVENTS.count,
        )
        self._forget_metrics = metrics.watch_server(
            self.transport.role_counts, lambda: {task.get_name(): _alive(task) for task in self._tasks}, lambda: operations.accepting
        )
        logs.event(
            "server_listening", url=self.url, process=process_id, tls=self.tls,
            store="redis_cluster" if config.redis_cluster_url else "redis", durability=config.durability.value,
        )  # fmt: skip

    @property
    def tls(self) -> bool:
        """Whether clients connect with ``wss://``."""
        return self.config.certfile is not None

    def _tls(self) -> ssl.SSLContext | None:
        if self.config.certfile is None:
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(self.config.certfile, self.config.keyfile)
        except (OSError, ssl.SSLError) as error:
            raise TlsSetupError(f"cannot use certfile {self.config.certfile} with keyfile {self.config.keyfile}: {error}") from None
        return context

    async def _open_archive(self) -> PostgresRaceArchive | None:
        """The archive in the configured PostgreSQL (migrated first with ``migrate``), or None without one."""
        if not self.config.database_url:
            return None
        self.database = await database.connect(self.config.database_url)
        if self.config.migrate:
            await database.migrate(self.database)
        await database.check_schema(self.database)
        return PostgresRaceArchive(self.database)

    def _connect(self, *, max_connections: int, socket_timeout: float) -> RedisClient:
        if self.config.redis_cluster_url:
            return connect_cluster(self.config.redis_cluster_url, max_connections=max_connections, socket_timeout=socket_timeout)
        return connect_redis(self.config.redis_url, max_connections=max_connections, socket_timeout=socket_timeout)

    async def _healthy(self) -> bool:
        assert self.redis is not None
        try:
            async with asyncio.timeout(1.0):
                return bool(await self.redis.ping())
        except (RedisError, OSError, TimeoutError):
            return False

    async def stop(self) -> None:
        """Graceful shutdown: stop accepting, answer requests in flight, close connections (1001 ``server_shutdown``),
        stop background work, close Redis clients. Every acknowledged move is in Redis already."""
        logs.event("shutdown_begin", connections=len(self.transport.live_connections()) if self.transport is not None else 0)
        if self.operations is not None:
            self.operations.accepting = False
        if self.transport is not None:
            await self.transport.stop()
        if self.bots is not None:
            await self.bots.stop()
        await self._stop_background()
        for service in (self.races, self.seed_pool, self.admin, self.analyst):
            if service is not None:
                await service.close()
        await self._close_redis()
        if self.database is not None:
            await self.database.close()
            self.database = None
        if self._forget_metrics is not None:
            self._forget_metrics()
            self._forget_metrics = None
        logs.event("shutdown_end")

    async def _stop_background(self) -> None:
        """Stop the background loops and cancel their tasks, waiting 5 s at most (a task still running is logged)."""
        for stop in self._stoppers:
            stop()
        for task in self._tasks:
            task.cancel()
        _, stuck = await asyncio.wait(self._tasks, timeout=5)
        for task in stuck:
            log.error("background task %s did not stop", task.get_name())

    async def _close_redis(self) -> None:
        """Close the Redis clients and their connections."""
        if self.races is not None:
            await self.races.store.close()  # its own connection for race scripts (server/store/script_pipeline.py)
        for client in (self.redis, self.reader_redis):
            if client is not None:
                await client.aclose()
                if isinstance(client, Redis):
                    await client.connection_pool.disconnect()

    @property
    def url(self) -> str:
        """The WebSocket URL clients connect to."""
        return f"{'wss' if self.tls else 'ws'}://{self.config.host}:{self.port}"

    @property
    def loopback_url(self) -> str:
        """The URL this process's own clients (summoned bots) use: a wildcard listening address (``0.0.0.0``,
        ``::``) is not one to connect to, and an IPv6 address needs brackets in a URL (``ws://:::8765`` was
        ``internal_error``)."""
        host = self.config.host
        if host in ("", "0.0.0.0"):
            host = "127.0.0.1"
        elif host == "::":
            host = "::1"  # asyncio binds "::" IPv6-only
        return f"{'wss' if self.tls else 'ws'}://{f'[{host}]' if ':' in host else host}:{self.port}"

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        await self.stop()


def own_certificate(certfile: str | None) -> ssl.SSLContext | None:
    """The TLS context of this process's own clients (summoned bots) on ``wss://``: they trust exactly the
    process's certificate (chain) and not the host name, which names the public host, not the loopback address
    they connect to. None without TLS."""
    if certfile is None:
        return None
    context = ssl.create_default_context(cafile=certfile)
    context.check_hostname = False
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN  # a leaf or an intermediate of the file is the anchor
    return context


GC_THRESHOLDS = (50_000, 20, 10)
"""The garbage collector's generation thresholds in a server process (Python's default is 700, 10, 10).

With the default, an object still alive after ~7,000 allocations (a few milliseconds of a busy server: a pending
reply, an event held for a delayed spectator) reaches the oldest generation, whose collection walks every object
of every live race: at 1,000 races + 1,000 spectators 14 full collections of 0.25-0.4 s each took 46 % of the
process's CPU time and stopped it for as long each time (docs/BENCHMARKS.md "Third pass"). Nearly every object is
freed by reference counting; these thresholds only let the short-lived ones die before they are promoted."""


def tune_garbage_collection() -> None:
    """Set up the collector of a server process once it has started: what start-up loaded (modules, the
    services) is moved out of the collector's sight (``gc.freeze``, never collected, never walked again) and
    :data:`GC_THRESHOLDS` apply. Only for a process that is a server (``serve_until_signal``), not for tests that
    start servers in their own process."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


async def _until_stopped(server: RaceServer, stop: asyncio.Event, terminate: asyncio.Event, drain_seconds: float) -> None:
    """Return on ``stop``, at the end of a drain, or, after ``terminate`` (SIGTERM), at the end of the drain it
    starts (at most ``drain_seconds``; 0: at once)."""
    assert server.operations is not None
    operations = server.operations
    waits = [asyncio.create_task(event.wait()) for event in (stop, terminate, operations.drained)]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if terminate.is_set() and not stop.is_set() and not operations.drained.is_set() and drain_seconds > 0:
            print(f"flowergarden: SIGTERM: draining: the races under way may finish for up to {drain_seconds:g} s "
                  "(SIGTERM again or Ctrl-C stops at once) ...", flush=True)
            operations.drain(drain_seconds)  # already draining (flowergarden admin drain): that drain goes on
            await asyncio.wait([waits[0], waits[2]], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


async def serve_until_signal(config: ServerConfig) -> None:
    """Run a server until SIGINT (shut down gracefully at once: connections closed with 1001, clients reconnect
    elsewhere) or SIGTERM (drain first for up to ``sigterm_drain_seconds``, then the same; a second SIGTERM stops
    at once)."""
    stop, terminate = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stop.set)
    loop.add_signal_handler(signal.SIGTERM, lambda: (stop if terminate.is_set() else terminate).set())
    async with RaceServer(config) as server:
        scheme = "https" if server.tls else "http"
        print(f"flowergarden: serving races on {server.url}  (health check: {scheme}://{config.host}:{server.port}/health, "
              f"readiness /ready, metrics /metrics)", flush=True)
        print(f"flowergarden: web client on {scheme}://{config.host}:{server.port}/", flush=True)
        print("flowergarden: Ctrl-C stops the server; SIGTERM drains it first", flush=True)
        tune_garbage_collection()
        await _until_stopped(server, stop, terminate, config.sigterm_drain_seconds)
        assert server.operations is not None
        print("flowergarden: drained, stopping ..." if server.operations.drained.is_set() else "flowergarden: stopping ...", flush=True)
