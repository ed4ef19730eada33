"""Redis clients for the server: one Redis, or a Redis Cluster; a bounded pool for commands, a separate one for
blocking reads; and the one retry the stores allow themselves, for operations that are safe to repeat.

Everything above the store takes a :data:`RedisClient` and never needs to know which of the two it is: every
multi-key command and script names keys of one hash slot (docs/STORAGE.md "On a Redis Cluster").

Every command's round trip is measured for ``flowergarden_redis_command_seconds`` (by command name; a pipeline
counts once, as ``PIPELINE``; a blocking ``XREAD`` includes its wait).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar
from urllib.parse import unquote, urlsplit

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, RedisError

from server import metrics
from server.store.errors import StoreUnavailable

P = ParamSpec("P")
T = TypeVar("T")

RedisClient = Redis | RedisCluster
"""A client of one Redis or of a Redis Cluster."""


class MeasuredPipeline(Pipeline):
    """A pipeline whose round trip is measured."""

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        started = time.perf_counter()
        failed = True
        try:
            result = await super().execute(raise_on_error)
            failed = False
            return result
        finally:
            metrics.redis_command("PIPELINE", time.perf_counter() - started, failed)


class MeasuredRedis(Redis):
    """A client whose commands are measured."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        started = time.perf_counter()
        failed = True
        try:
            result = await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
            failed = False
            return result
        except NoScriptError:
            failed = False  # a script-cache miss: the caller loads the script and runs it again, not a Redis error
            raise
        finally:
            name = args[0] if args and isinstance(args[0], str) else "?"
            metrics.redis_command(name.split(" ", 1)[0].upper(), time.perf_counter() - started, failed)

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Pipeline:
        return MeasuredPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)


class MeasuredRedisCluster(RedisCluster):
    """A Redis Cluster client whose commands are measured (its pipelines are not)."""

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        failed = True
        try:
            result = await super().execute_command(*args, **kwargs)
            failed = False
            return result
        except NoScriptError:
            failed = False  # a script-cache miss: the caller loads the script and runs it again, not a Redis error
            raise
        finally:
            name = args[0] if args and isinstance(args[0], str) else "?"
            metrics.redis_command(name.split(" ", 1)[0].upper(), time.perf_counter() - started, failed)


class QueuedPool(BlockingConnectionPool):
    """A blocking pool that counts the callers waiting in it for a connection: the server's measure of how far its
    commands queue behind the pool (:func:`commands_waiting`), which refuses new races and spectators past it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waiting = 0
        """Callers inside :meth:`get_connection` now (waiting for a free connection, or being given one)."""

    async def get_connection(self, *_ignored: Any, **_options: Any) -> Any:
        """A free connection, waiting for one as long as it takes (redis-py still passes arguments it ignores)."""
        self.waiting += 1
        try:
            return await super().get_connection()  # type: ignore[no-untyped-call]
        finally:
            self.waiting -= 1


def commands_waiting(client: RedisClient) -> int:
    """How many commands wait for a pooled connection of ``client`` (0 for a Cluster client, whose pools are per node
    and not counted)."""
    pool = client.connection_pool if isinstance(client, Redis) else None
    return pool.waiting if isinstance(pool, QueuedPool) else 0


def connect_redis(url: str, *, max_connections: int = 64, socket_timeout: float | None = 5.0) -> Redis:
    """A client whose pool waits for a free connection instead of raising past ``max_connections``.

    redis-py 8's default pool raises "Too many connections" past 100; a blocking pool queues instead, and without
    a limit on the wait: under overload the queue for a connection grew past the 10 s the pool used to allow and
    accepted moves failed with "No connection available" (``unavailable``, then ``out_of_sequence`` for the moves
    pipelined behind them) while Redis answered every command in time (issue 28.3,
    tests/test_overload_moves.py). The wait stays bounded when Redis is not answering: every holder of a connection
    gives up after ``socket_timeout`` (at once when Redis refuses connections), so the queue drains with errors.
    """
    pool = QueuedPool.from_url(
        url, max_connections=max_connections, timeout=None, socket_timeout=socket_timeout, socket_connect_timeout=5
    )
    return MeasuredRedis(connection_pool=pool)


def cluster_nodes(urls: str | Sequence[str]) -> list[tuple[str, int]]:
    """The (host, port) of each ``redis://host:port`` in a comma-separated list (or a sequence); ValueError if one is
    not such a URL."""
    items = [part.strip() for part in urls.split(",")] if isinstance(urls, str) else [part.strip() for part in urls]
    nodes: list[tuple[str, int]] = []
    for item in filter(None, items):
        parts = urlsplit(item)
        if parts.scheme not in ("redis", "rediss") or not parts.hostname:
            raise ValueError(f"not a redis://host:port URL: {item!r}")
        nodes.append((parts.hostname, parts.port or 6379))
    if not nodes:
        raise ValueError("no Redis Cluster node given")
    return nodes


def connect_cluster(urls: str | Sequence[str], *, max_connections: int = 64, socket_timeout: float | None = 5.0) -> RedisCluster:
    """A Redis Cluster client that discovers every node from any one of ``urls`` (user and password from the first).

    ``max_connections`` bounds the connections per node. The client connects on first use (or ``initialize()``).
    A command failing on a node that went away is retried three times within about a second (redis-py's default
    is ten times with back-off up to seconds, which held moves for 7-9 s during a failover): after that the caller
    gets StoreUnavailable, the client ``unavailable``, and resends.
    """
    first = urlsplit(urls.split(",")[0].strip() if isinstance(urls, str) else urls[0])
    return MeasuredRedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in cluster_nodes(urls)],
        username=unquote(first.username) if first.username else None,
        password=unquote(first.password) if first.password else None,
        ssl=first.scheme == "rediss",
        max_connections=max_connections,
        retry=Retry(ExponentialWithJitterBackoff(base=0.05, cap=0.5), retries=3),
        socket_timeout=socket_timeout,
        socket_connect_timeout=5,
    )


async def open_client(url: str, *, cluster: bool, max_connections: int) -> RedisClient:
    """A client of one Redis (``url``) or of a Redis Cluster (``url``: its nodes, comma-separated) for a tool that
    runs a few commands (``flowergarden admin``): a Cluster client knows its slot map before the first command, as the
    server's does, since reading a node's clock (:func:`time_ms_at`) needs it. StoreUnavailable if no node answers."""
    if not cluster:
        return connect_redis(url, max_connections=max_connections)
    client = connect_cluster(url, max_connections=max_connections)
    try:
        await client.initialize()
    except (RedisError, OSError) as error:
        await client.aclose()
        raise StoreUnavailable(f"{type(error).__name__}: {error}") from error
    return client


async def time_ms_at(client: RedisClient, key: str) -> int:
    """The clock (ms) of the Redis that holds ``key``: on a Cluster, the node serving its slot, whose scripts write
    the times compared with it (every race's times come from its own node's clock)."""
    if isinstance(client, RedisCluster):
        seconds, micros = await client.time(target_nodes=client.get_node_from_key(key))
    else:
        seconds, micros = await client.time()
    return int(seconds) * 1000 + int(micros) // 1000


async def count_in_window(redis: RedisClient, key: str, window_ms: int) -> int:
    """Count one event in the fixed window that starts with the first one (the key expires with it); returns the
    window's count so far."""
    async with redis.pipeline(transaction=True) as pipe:
        pipe.set(key, 0, nx=True, px=window_ms)
        pipe.incr(key)
        _, count = await pipe.execute()
    return int(count)


async def drop_idle_connections(client: RedisClient) -> None:
    """After a connection turned out dead (Redis restarted): close the idle pooled ones, which point at the old process
    too. A Cluster client has already dropped the failed node's connections and re-reads the slot map by itself."""
    if isinstance(client, Redis):
        await client.connection_pool.disconnect(inuse_connections=False)


class HasRedis(Protocol):
    """A store: anything with the Redis client it talks through."""

    redis: RedisClient


S = TypeVar("S", bound=HasRedis)


def repeatable(
    operation: Callable[Concatenate[S, P], Coroutine[Any, Any, T]],
    *,
    after_repeat: Callable[[S, tuple[Any, ...]], Awaitable[None]] | None = None,
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
    """Mark a store operation as safe to repeat (a read, or an idempotent write or script): when its connection turns
    out to be dead — Redis restarted, so every idle pooled connection points at the old process — the pool's idle
    connections are dropped and the operation runs once more, on a fresh connection.

    Only a connection error is retried (a timeout may mean Redis is overloaded: waiting twice would not help), and
    only once: if Redis is really down the caller gets the error at once. ``after_repeat(store, args)`` runs after a
    repeat that succeeded: what the lost reply would have told the caller can be told there.
    """

    @functools.wraps(operation)
    async def run(store: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await operation(store, *args, **kwargs)
        except RedisConnectionError:
            await drop_idle_connections(store.redis)
            answer = await operation(store, *args, **kwargs)
            if after_repeat is not None:
                await after_repeat(store, args)
            return answer

    return run
