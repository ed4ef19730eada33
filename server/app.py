"""Wiring: one server process = Redis clients + stores + services + event hub + timer sweeper + transport."""

from __future__ import annotations

import asyncio
import logging
import secrets
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.dispatch import Dispatcher
from server.services.event_hub import EventHub
from server.services.race import RaceService
from server.services.sessions import SessionService
from server.services.timers import TimerSweeper
from server.store import EventReader, RaceStore, SessionStore, connect_redis
from server.transport import Transport, TransportLimits
from shared import DeadCheck
from shared.solver import Budget, dead_check

log = logging.getLogger(__name__)

DAY_SECONDS = 24 * 3600


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything an operator can set (``flowergarden serve --help`` lists the flags)."""

    redis_url: str
    host: str = "127.0.0.1"
    port: int = 8765
    countdown_seconds: float = 3.0
    limits: TransportLimits = field(default_factory=TransportLimits)
    live_ttl_seconds: int = DAY_SECONDS
    """How long an unfinished race is kept after its last change."""
    record_ttl_seconds: int = 7 * DAY_SECONDS
    """How long a finished race's record is kept."""
    session_ttl_seconds: int = 7 * DAY_SECONDS
    timer_interval: float = 0.1
    dead_check_seconds: float = 0.05
    """Budget of the solver's dead-position proof after each move (0 turns the check off)."""
    dead_check_nodes: int = 20_000
    max_actions: int = 1000
    """Actions (moves, undos, redeals) one player may make in one race."""
    redis_pool_size: int = 64


def make_dead_check(config: ServerConfig) -> DeadCheck | None:
    """The solver's proof of dead positions within the configured budget, or None when turned off."""
    if config.dead_check_seconds <= 0:
        return None
    return dead_check(Budget(seconds=config.dead_check_seconds, nodes=config.dead_check_nodes))


class RaceServer:
    """A running server; ``async with RaceServer(config) as server`` starts and stops it."""

    def __init__(self, config: ServerConfig, *, dead_check: DeadCheck | None = None) -> None:
        """``dead_check`` replaces the solver's proof of dead positions (for tools and tests)."""
        self.config = config
        self.dead_check = dead_check or make_dead_check(config)
        self.redis: Redis | None = None
        self.reader_redis: Redis | None = None
        self.races: RaceService | None = None
        self.transport: Transport | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._stoppers: list[Callable[[], None]] = []
        self.port = config.port

    async def start(self) -> None:
        """Connect to Redis, start the background tasks and listen."""
        config = self.config
        self.redis = connect_redis(config.redis_url, max_connections=config.redis_pool_size)
        # Blocking reads need their own connection; XREAD BLOCK stays below this socket timeout.
        self.reader_redis = connect_redis(config.redis_url, max_connections=2, socket_timeout=10.0)
        await self.redis.ping()
        store = RaceStore(
            self.redis,
            live_ttl_ms=config.live_ttl_seconds * 1000,
            record_ttl_ms=config.record_ttl_seconds * 1000,
            max_actions=config.max_actions,
        )
        self.races = RaceService(store, countdown_ms=round(config.countdown_seconds * 1000), dead_check=self.dead_check)
        sessions = SessionService(SessionStore(self.redis, ttl_ms=config.session_ttl_seconds * 1000))
        hub = EventHub(store, EventReader(self.reader_redis, secrets.token_hex(8)), block_ms=1000)
        sweeper = TimerSweeper(store, interval=config.timer_interval)
        self._stoppers = [hub.stop, sweeper.stop]
        self._tasks = [asyncio.create_task(hub.run()), asyncio.create_task(sweeper.run())]
        self.transport = Transport(Dispatcher(sessions, self.races, hub), config.limits, self._healthy)
        server = await self.transport.start(config.host, config.port)
        self.port = next(iter(server.sockets)).getsockname()[1]
        log.info("serving on ws://%s:%d (store %s)", config.host, self.port, config.redis_url)

    async def _healthy(self) -> bool:
        assert self.redis is not None
        try:
            async with asyncio.timeout(1.0):
                return bool(await self.redis.ping())
        except (RedisError, OSError, TimeoutError):
            return False

    async def stop(self) -> None:
        """Close connections (1001), stop background work, close Redis clients."""
        if self.transport is not None:
            await self.transport.stop()
        for stop in self._stoppers:
            stop()
        for task in self._tasks:
            task.cancel()
        _, stuck = await asyncio.wait(self._tasks, timeout=5)
        for task in stuck:
            log.error("background task %s did not stop", task.get_name())
        if self.races is not None:
            await self.races.close()
        for client in (self.redis, self.reader_redis):
            if client is not None:
                await client.aclose()
                await client.connection_pool.disconnect()

    @property
    def url(self) -> str:
        """The WebSocket URL clients connect to."""
        return f"ws://{self.config.host}:{self.port}"

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        await self.stop()


async def serve_until_signal(config: ServerConfig) -> None:
    """Run a server until SIGINT or SIGTERM, then shut down gracefully (connections closed with 1001)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, stop.set)
    async with RaceServer(config) as server:
        print(f"flowergarden: serving races on {server.url}  (health check: http://{config.host}:{server.port}/health)", flush=True)
        print("flowergarden: Ctrl-C or SIGTERM stops the server", flush=True)
        await stop.wait()
        print("flowergarden: stopping …", flush=True)
