"""How many players the server processes serve, summed in Redis: each process writes its own line and reads the
total (the lobby's "N online, M racing")."""

from __future__ import annotations

from server.store import keys
from server.store.connection import RedisClient
from server.store.errors import translate_errors
from server.store.scripts import Scripts, script_arguments


@translate_errors
class OnlineStore:
    """Every process's count of its players, one line each in one hash; a line not renewed within ``stale_ms`` (its
    process stopped or died) no longer counts."""

    def __init__(self, redis: RedisClient, stale_ms: int) -> None:
        self.redis = redis
        self.stale_ms = stale_ms
        self.scripts = Scripts(redis)

    async def report(self, process: str, online: int, racing: int) -> tuple[int, int]:
        """Write ``process``'s counts; the totals (online, racing) over every process whose line is fresh."""
        result = await self.scripts.online_report(
            keys=[keys.ONLINE], args=script_arguments(process=process, online=online, racing=racing, stale_ms=self.stale_ms)
        )
        return int(result[0]), int(result[1])

    async def forget(self, process: str) -> None:
        """Take ``process``'s line out at once (it is stopping)."""
        await self.redis.hdel(keys.ONLINE, process)
