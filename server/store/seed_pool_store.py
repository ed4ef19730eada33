"""Pools of solver-proven deals in Redis, one set per profile and tier: filled up to a target, popped atomically."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from server.store import keys
from server.store.connection import RedisClient, repeatable
from server.store.errors import translate_errors
from server.store.scripts import Scripts, script_arguments
from shared.protocol import Difficulty


@dataclass(frozen=True, slots=True)
class PooledSeed:
    """A proven deal: its seed, its tier and the solver's winning line (committed to, revealed with the result)."""

    seed: int
    difficulty: Difficulty | None
    line: tuple[str, ...]

    def member(self) -> str:
        """How the pool stores it."""
        tier = None if self.difficulty is None else self.difficulty.value
        return json.dumps({"seed": str(self.seed), "difficulty": tier, "line": list(self.line)}, separators=(",", ":"))

    @staticmethod
    def parse(member: str) -> PooledSeed:
        """A stored member (a bare decimal seed from before tiers: no tier, no line)."""
        if member.isdigit():
            return PooledSeed(int(member), None, ())
        fields = json.loads(member)
        tier = fields.get("difficulty")
        return PooledSeed(int(fields["seed"]), None if tier is None else Difficulty(tier), tuple(fields.get("line", ())))


@translate_errors
class SeedPoolStore:
    """Deals the solver proved winnable, each handed out once (SPOP); ``difficulty`` None is the pool of any tier."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self.scripts = Scripts(redis)

    async def take(self, profile: str, difficulty: Difficulty | None = None) -> PooledSeed | None:
        """Remove and return one proven deal of ``profile`` (and tier); None when that pool is empty."""
        value: Any = await self.redis.spop(keys.seed_pool(profile, None if difficulty is None else difficulty.value))
        return None if value is None else PooledSeed.parse(value.decode())

    @repeatable
    async def add(self, profile: str, seed: PooledSeed, target: int, *, tiered: bool = False) -> int:
        """Add a proven deal to the pool of any tier (``tiered``: of its own tier) unless it holds ``target``;
        returns the pool's size."""
        tier = seed.difficulty.value if tiered and seed.difficulty is not None else None
        return int(await self.scripts.seed_pool_add(keys=[keys.seed_pool(profile, tier)], args=script_arguments(member=seed.member(), target=target)))

    @repeatable
    async def size(self, profile: str, difficulty: Difficulty | None = None) -> int:
        """How many proven deals of ``profile`` (and tier) are ready."""
        return int(await self.redis.scard(keys.seed_pool(profile, None if difficulty is None else difficulty.value)))
