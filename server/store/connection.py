"""Redis clients for the server: a bounded blocking pool for commands, a separate one for blocking reads; and the
one retry the stores allow themselves, for operations that are safe to repeat.

Every command's round trip is measured for ``flowergarden_redis_command_seconds`` (by command name; a pipeline
counts once, as ``PIPELINE``; a blocking ``XREAD`` includes its wait).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import ConnectionError as RedisConnectionError

from server import metrics

P = ParamSpec("P")
T = TypeVar("T")


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
        finally:
            name = args[0] if args and isinstance(args[0], str) else "?"
            metrics.redis_command(name.split(" ", 1)[0].upper(), time.perf_counter() - started, failed)

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Pipeline:
        return MeasuredPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)


def connect_redis(url: str, *, max_connections: int = 64, socket_timeout: float | None = 5.0) -> Redis:
    """A client whose pool waits for a free connection instead of raising past ``max_connections``.

    redis-py 8's default pool raises "Too many connections" past 100; a blocking pool queues instead.
    """
    pool = BlockingConnectionPool.from_url(
        url, max_connections=max_connections, timeout=10, socket_timeout=socket_timeout, socket_connect_timeout=5
    )
    return MeasuredRedis(connection_pool=pool)


async def count_in_window(redis: Redis, key: str, window_ms: int) -> int:
    """Count one event in the fixed window that starts with the first one (the key expires with it); returns the
    window's count so far."""
    async with redis.pipeline(transaction=True) as pipe:
        pipe.set(key, 0, nx=True, px=window_ms)
        pipe.incr(key)
        _, count = await pipe.execute()
    return int(count)


class HasRedis(Protocol):
    """A store: anything with the Redis client it talks through."""

    redis: Redis


S = TypeVar("S", bound=HasRedis)


def repeatable(operation: Callable[Concatenate[S, P], Coroutine[Any, Any, T]]) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
    """Mark a store operation as safe to repeat (a read, or an idempotent write or script): when its connection turns
    out to be dead — Redis restarted, so every idle pooled connection points at the old process — the pool's idle
    connections are dropped and the operation runs once more, on a fresh connection.

    Only a connection error is retried (a timeout may mean Redis is overloaded: waiting twice would not help), and
    only once: if Redis is really down the caller gets the error at once.
    """

    @functools.wraps(operation)
    async def run(store: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await operation(store, *args, **kwargs)
        except RedisConnectionError:
            await store.redis.connection_pool.disconnect(inuse_connections=False)
            return await operation(store, *args, **kwargs)

    return run
