"""Redis clients for the server: a bounded blocking pool for commands, a separate one for blocking reads."""

from __future__ import annotations

from redis.asyncio import BlockingConnectionPool, Redis


def connect_redis(url: str, *, max_connections: int = 64, socket_timeout: float | None = 5.0) -> Redis:
    """A client whose pool waits for a free connection instead of raising past ``max_connections``.

    redis-py 8's default pool raises "Too many connections" past 100; a blocking pool queues instead.
    """
    pool = BlockingConnectionPool.from_url(
        url, max_connections=max_connections, timeout=10, socket_timeout=socket_timeout, socket_connect_timeout=5
    )
    return Redis(connection_pool=pool)
