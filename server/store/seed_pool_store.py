"""Pools of solver-proven seeds in Redis, one set per profile: filled up to a target, popped atomically."""

from __future__ import annotations

from typing import Any

from server.store import keys
from server.store.connection import RedisClient, repeatable
from server.store.errors import translate_errors
from server.store.scripts import Scripts


@translate_errors
class SeedPoolStore:
    """Seeds the solver proved winnable, each handed out once (SPOP)."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self.scripts = Scripts(redis)

    async def take(self, profile: str) -> int | None:
        """Remove and return one proven seed of ``profile``; None when the pool is empty."""
        value: Any = await self.redis.spop(keys.seed_pool(profile))
        return None if value is None else int(value)

    @repeatable
    async def add(self, profile: str, seed: int, target: int) -> int:
        """Add a proven seed unless the pool already holds ``target``; returns the pool's size."""
        return int(await self.scripts.seed_pool_add(keys=[keys.seed_pool(profile)], args=[str(seed), target]))

    @repeatable
    async def size(self, profile: str) -> int:
        """How many proven seeds of ``profile`` are ready."""
        return int(await self.redis.scard(keys.seed_pool(profile)))
